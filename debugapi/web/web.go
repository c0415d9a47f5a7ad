package web

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

//go:embed assets
var assets embed.FS

// Source is what the page reads; *engine.Engine implements it.
type Source interface {
	Status() status.Status
	StatusChanged() <-chan struct{}
	Queue(script string) (inspection.QueueView, error)
	ScriptMemory() map[string]int64
	IndexSummaries() []inspection.IndexSummary
	AuditSummaries(limit int) []inspection.AuditSummary
	Subscribe(f inspection.TailFilter) (inspection.Subscription, error)
}

// Options configure the page.
type Options struct {
	Source Source
	// CanAct reports whether a request may use the actions; nil: every request may.
	CanAct func(r *http.Request) bool
	// ScriptsDir is the scripts folder, read for the source lines of a failed load's frame.
	ScriptsDir string
	// Interval is how often the snapshot is rebuilt and, when changed, pushed; default 1s.
	Interval time.Duration
	Logger   *slog.Logger
}

// Page is the web page's handler set; mount it with Register and run it with Run.
type Page struct {
	opts   Options
	hub    *hub
	rates  *rates
	kick   chan struct{} // a new stream wants a snapshot now
	frames frames        // Run's goroutine only
	// recording: Run holds a trace subscription, so the rates mean something.
	recording atomic.Bool
}

// New builds the page.
func New(opts Options) *Page {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Page{opts: opts, hub: newHub(), rates: newRates(), kick: make(chan struct{}, 1), frames: frames{dir: opts.ScriptsDir}}
}

// Register adds the page's routes with handle (debugapi.Server.Handle).
func (p *Page) Register(handle func(pattern string, h http.Handler)) {
	index := http.HandlerFunc(p.index)
	for _, pattern := range []string{"GET /{$}", "GET /scripts/", "GET /explain/", "GET /queues", "GET /informers", "GET /tail", "GET /indexes", "GET /policies"} {
		handle(pattern, index)
	}
	sub, _ := fs.Sub(assets, "assets")
	handle("GET /ui/assets/", http.StripPrefix("/ui/assets/", cached(http.FileServerFS(sub))))
	handle("GET /ui/events", http.HandlerFunc(p.events))
}

// index serves the page; the script reads the path to open the view a deep link names.
func (p *Page) index(w http.ResponseWriter, _ *http.Request) {
	body, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, "read page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	// Everything is same-origin: nothing external can be loaded even if a value were injected.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}

// cached lets the browser revalidate the assets (they change with the binary).
func cached(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}
