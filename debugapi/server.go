package debugapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"

	"github.com/jsinformer/jsinformer/inspection"
)

// Source is what the API reads and acts on; *engine.Engine implements it.
type Source interface {
	Explain(ctx context.Context, resource, key string, limit int) (inspection.Explanation, error)
	Queue(script string) (inspection.QueueView, error)
	Cache(resource, key string, q inspection.IndexQuery) (inspection.CacheView, error)
	Indexes(resource, key string) (inspection.IndexesView, error)
	Subscribe(f inspection.TailFilter) (inspection.Subscription, error)
	Retry(script, key string) error
	Pause(script string) (bool, error)
	Resume(script string) (bool, error)
	Replay(ctx context.Context, script, resource, key string, dryRun bool) (inspection.TraceRecord, error)
}

// Options configure a Server.
type Options struct {
	Source Source
	// Status returns the /debug/status document (the engine's state API).
	Status func() any
	// LogLevel is the runner's log level, which the log-level action changes for a while.
	LogLevel *slog.LevelVar
	Logger   *slog.Logger
	// Pprof serves net/http/pprof under /debug/pprof/.
	Pprof bool
	// Auth, when set, authenticates and authorizes every request (non-loopback listeners).
	Auth Authorizer
	// Loopback: the listener is on loopback; Host headers must then name loopback.
	Loopback bool
	// Limits bound connections, tail streams and how long a request may take.
	Limits Limits
}

// Server is the debug API's HTTP handler.
type Server struct {
	opts  Options
	mux   *http.ServeMux
	level *levelOverride
	tails tailSlots
}

// New builds the server; Serve runs it.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Limits = opts.Limits.withDefaults()
	s := &Server{opts: opts, mux: http.NewServeMux(), level: newLevelOverride(opts.LogLevel, opts.Logger)}
	s.tails.max = opts.Limits.MaxTails
	s.routes()
	return s
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET /debug/status", s.status)
	s.mux.HandleFunc("GET /debug/queue", s.queue)
	s.mux.HandleFunc("GET /debug/cache", s.cache)
	s.mux.HandleFunc("GET /debug/indexes", s.indexes)
	s.mux.HandleFunc("GET /debug/explain", s.explain)
	s.mux.HandleFunc("GET /debug/tail", s.tail)
	s.mux.HandleFunc("POST /debug/actions/retry", s.retry)
	s.mux.HandleFunc("POST /debug/actions/pause", s.pause)
	s.mux.HandleFunc("POST /debug/actions/resume", s.resume)
	s.mux.HandleFunc("POST /debug/actions/log-level", s.logLevel)
	s.mux.HandleFunc("POST /debug/actions/replay", s.replay)
	if s.opts.Pprof {
		s.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		s.mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		s.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		s.mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		s.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	s.mux.HandleFunc("/debug/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such debug endpoint: "+r.Method+" "+r.URL.Path+" (see docs/debugging.md)")
	})
}

// Handle lets a later feature (the web page) add routes on the same listener; the auth and
// Host checks of ServeHTTP cover them too.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// ServeHTTP checks the caller, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Loopback && !loopbackHost(r.Host) {
		writeError(w, http.StatusForbidden, "the debug API on a loopback address answers only requests for a loopback host name, not "+r.Host)
		return
	}
	if r.Method == http.MethodPost && !isJSON(r.Header.Get("Content-Type")) {
		writeError(w, http.StatusUnsupportedMediaType, "actions must be sent with Content-Type: application/json")
		return
	}
	if s.opts.Auth != nil && !s.opts.Auth.Allow(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Serve serves on l until ctx is done, then closes the server (tail streams included) and
// returns; the listener is closed by then. Options.Limits bound the connections and how long
// each may be held.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	lim := s.opts.Limits
	srv := &http.Server{
		Handler: s, BaseContext: func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: lim.ReadTimeout, IdleTimeout: lim.IdleTimeout, WriteTimeout: lim.WriteTimeout,
		ConnState: newConnLimit(lim.MaxConns, s.opts.Logger).track,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	defer s.level.stop()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = srv.Close()
		<-done //nolint:errcheck // http.ErrServerClosed, after Close
		return nil
	}
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	if s.opts.Status == nil {
		writeError(w, http.StatusNotFound, "status is not available")
		return
	}
	writeJSON(w, s.opts.Status())
}

func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	v, err := s.opts.Source.Queue(r.URL.Query().Get("script"))
	reply(w, v, err)
}

func (s *Server) cache(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	resource, ok := required(w, q.Get("resource"), "resource")
	if !ok {
		return
	}
	iq := inspection.IndexQuery{Script: q.Get("script"), Index: q.Get("index"), Value: q.Get("value")}
	if iq.Script != "" && iq.Index == "" {
		writeError(w, http.StatusBadRequest, "an index query needs script, index and value")
		return
	}
	v, err := s.opts.Source.Cache(resource, q.Get("object"), iq)
	reply(w, v, err)
}

func (s *Server) indexes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	resource, ok := required(w, q.Get("resource"), "resource")
	if !ok {
		return
	}
	object, ok := required(w, q.Get("object"), "object")
	if !ok {
		return
	}
	v, err := s.opts.Source.Indexes(resource, object)
	reply(w, v, err)
}

func (s *Server) explain(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	resource, ok := required(w, q.Get("resource"), "resource")
	if !ok {
		return
	}
	object, ok := required(w, q.Get("object"), "object")
	if !ok {
		return
	}
	limit := 0
	if e := q.Get("events"); e != "" {
		n, err := strconv.Atoi(e)
		if err != nil || n <= 0 {
			writeError(w, http.StatusBadRequest, "events must be a positive number, not "+strconv.Quote(e))
			return
		}
		limit = n
	}
	v, err := s.opts.Source.Explain(r.Context(), resource, object, limit)
	reply(w, v, err)
}

// required reports a missing query parameter.
func required(w http.ResponseWriter, v, name string) (string, bool) {
	if v == "" {
		writeError(w, http.StatusBadRequest, "missing query parameter "+name)
		return "", false
	}
	return v, true
}

// reply writes v, or err with the status its kind calls for.
func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	writeJSON(w, v)
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, inspection.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, inspection.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, inspection.ErrTraceOff):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON of every error answer.
type ErrorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.TrimSpace(strings.ToLower(mt)) == "application/json"
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
