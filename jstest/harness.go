package jstest

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dop251/goja"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/offline"
	"github.com/jsinformer/jsinformer/permissions"
)

// DefaultStart is where a harness's virtual clock starts, unless harness({now}) says.
var DefaultStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// defaultSettleWithin is how far h.settle() moves the clock at most, unless told.
const defaultSettleWithin = time.Hour

// harness is what harness(plugin, {objects, flags}) returns: one plugin on the runner's
// engine, against its own in-memory cluster and virtual clock.
type harness struct {
	f       *fileRun
	cluster *memcluster.Cluster
	clock   *clocktesting.FakeClock
	off     *offline.Harness
	resolve *dynamicinformer.Resolver
	logs    *capture
	http    *httpRoutes // h.http: the plugin's fetch answers (http.go)
	plugin  string      // the plugin's name, which its store is scoped to

	mu     sync.Mutex
	writes []memcluster.Write
}

// harnessOptions are harness()'s second argument.
type harnessOptions struct {
	Objects []any        `json:"objects"`
	Flags   harnessFlags `json:"flags"`
	Now     string       `json:"now"`
	HTTP    any          `json:"http"` // read from the JS value: its handlers are functions (initialRoutes)
	// Admission lists the admission scripts loaded beside the plugin; nil (absent) means the
	// folder's (admitscripts.go).
	Admission []string `json:"admission"`
	// Store seeds the plugin's ctx.store before it starts (storeapi.go).
	Store map[string]any `json:"store"`
}

// The properties harness() accepts in its options and their flags, as their json tags name
// them; anything else is an error. jsinformer-test.d.ts declares the same (a test checks).
var (
	harnessOptionKeys = []string{"objects", "flags", "now", "http", "admission", "store"}
	harnessFlagKeys   = []string{"gvr", "namespace", "selector", "fieldSelector", "dryRun", "handlerTimeout", "allowNet"}
)

// harnessFlags are the runner's flags that matter to a plugin.
type harnessFlags struct {
	GVR            any    `json:"gvr"` // a string or a list
	Namespace      string `json:"namespace"`
	Selector       string `json:"selector"`
	FieldSelector  string `json:"fieldSelector"`
	DryRun         bool   `json:"dryRun"`
	HandlerTimeout string `json:"handlerTimeout"`
	// AllowNet is the runner's --allow-net (a string of comma-separated entries, or a list):
	// given, the plugin's requests are checked against it as the runner checks them; absent,
	// routes stand in for the network and only the script's net declaration is checked.
	AllowNet any `json:"allowNet"`
}

func (f *fileRun) newHarness(call goja.FunctionCall) goja.Value {
	path := call.Argument(0)
	if missing(path) || path.String() == "" {
		f.throw(errors.New("harness(plugin, options): plugin is the path of the plugin file, relative to the test file"))
	}
	opts, err := f.harnessOptions(call.Argument(1))
	if err != nil {
		f.throw(fmt.Errorf("harness: %w", err))
	}
	h, err := f.startHarness(path.String(), opts, initialRoutes(call.Argument(1)))
	if err != nil {
		f.throw(err)
	}
	f.harnesses = append(f.harnesses, h)
	return h.object()
}

func (f *fileRun) harnessOptions(v goja.Value) (harnessOptions, error) {
	var opts harnessOptions
	if missing(v) {
		return opts, nil
	}
	data, err := f.toGo(v)
	if err != nil {
		return opts, err
	}
	if err := decodeStrict(data, &opts, harnessOptionKeys...); err != nil {
		return opts, err
	}
	if flags, ok := data.(map[string]any)["flags"]; ok {
		var unused harnessFlags
		if err := decodeStrict(flags, &unused, harnessFlagKeys...); err != nil {
			return opts, fmt.Errorf("flags: %w", err)
		}
	}
	if hv, ok := data.(map[string]any)["http"]; ok {
		var unused struct {
			Routes any `json:"routes"`
		}
		if err := decodeStrict(hv, &unused, "routes"); err != nil {
			return opts, fmt.Errorf("http: %w", err)
		}
	}
	return opts, nil
}

// startHarness builds the cluster, seeds it, loads the plugin and lets the initial list
// settle (without moving the clock).
func (f *fileRun) startHarness(plugin string, opts harnessOptions, routes goja.Value) (*harness, error) {
	start := DefaultStart
	if opts.Now != "" {
		var err error
		if start, err = time.Parse(time.RFC3339, opts.Now); err != nil {
			return nil, fmt.Errorf("harness: now must be an RFC 3339 time: %w", err)
		}
	}
	h := &harness{f: f, clock: clocktesting.NewFakeClock(start), logs: newCapture(), http: newHTTPRoutes()}
	if err := h.addRoutes(routes); err != nil {
		return nil, fmt.Errorf("harness: http.routes: %w", err)
	}
	var err error
	if h.cluster, err = memcluster.New(memcluster.Options{Clock: h.clock}); err != nil {
		return nil, err
	}
	h.resolve = dynamicinformer.NewResolver(h.cluster.Discovery(), nil).WithoutThrottle()
	objs, err := objectsOf(f.dir, opts.Objects)
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	for _, obj := range objs {
		if _, err := h.put(obj); err != nil {
			return nil, fmt.Errorf("harness: seed %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	if err := h.start(plugin, opts); err != nil {
		return nil, err
	}
	return h, nil
}

// start loads the admission scripts, then the plugin, and settles; on an error it closes
// what it started.
func (h *harness) start(plugin string, opts harnessOptions) error {
	cfg, err := h.offlineConfig(opts.Flags)
	if err != nil {
		return err
	}
	if h.http.allow, err = allowList(opts.Flags.AllowNet); err != nil {
		return fmt.Errorf("harness: flags.allowNet: %w", err)
	}
	name := filepath.ToSlash(filepath.Clean(plugin))
	admitting, err := h.f.admissionScripts(name, opts.Admission)
	if err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	if h.off, err = offline.New(cfg); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	h.http.after = h.off.AfterFunc
	h.plugin = name
	if err := h.seedStore(name, opts.Store); err != nil {
		h.off.Close()
		return err
	}
	// The initial lists: nothing can move the clock before harness() returns.
	h.http.loading = true
	err = h.loadAll(admitting, name, plugin)
	h.http.loading = false
	if err != nil {
		h.off.Close()
		return err
	}
	if err := h.pump(func() error { _, err := h.off.Settle(h.f.ctx, 0); return err }); err != nil {
		h.off.Close()
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}

// loadAll loads the admission scripts, then the plugin: the plugin's first writes are
// admitted like any other.
func (h *harness) loadAll(admitting []string, name, plugin string) error {
	for _, n := range admitting {
		if err := h.load(n, "admission script "+n); err != nil {
			return err
		}
	}
	return h.load(name, plugin)
}

// load reads and loads one plugin, shown in errors as shown.
func (h *harness) load(name, shown string) error {
	content, err := os.ReadFile(resolve(h.f.dir, name))
	if err != nil {
		return fmt.Errorf("harness: read %s: %w", shown, err)
	}
	if err := h.pump(func() error { return h.off.Load(h.f.ctx, name, content) }); err != nil {
		return fmt.Errorf("harness: %s not loaded: %w", shown, err)
	}
	return nil
}

func (h *harness) offlineConfig(flags harnessFlags) (offline.Config, error) {
	cfg := offline.Config{
		ScriptsDir: h.f.dir, Cluster: h.cluster, Clock: h.clock, Namespace: flags.Namespace, LabelSelector: flags.Selector,
		FieldSelector: flags.FieldSelector, DryRun: flags.DryRun, Logger: slog.New(h.logs),
		OnWrite: h.record, QuietTimeout: h.f.opts.QuietTimeout, Fetch: h.http.client,
	}
	if on := h.f.opts.OnCall; on != nil {
		cfg.OnCall = func(n permissions.Need, _ error) { on(n) }
	}
	switch g := flags.GVR.(type) {
	case nil:
	case string:
		cfg.Resources = []string{g}
	case []any:
		for _, r := range g {
			cfg.Resources = append(cfg.Resources, fmt.Sprint(r))
		}
	default:
		return cfg, fmt.Errorf("harness: flags.gvr must be a resource or a list of them")
	}
	if flags.HandlerTimeout != "" {
		d, err := time.ParseDuration(flags.HandlerTimeout)
		if err != nil {
			return cfg, fmt.Errorf("harness: flags.handlerTimeout: %w", err)
		}
		cfg.HandlerTimeout = d
	}
	return cfg, nil
}

func (h *harness) record(w memcluster.Write) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writes = append(h.writes, w)
}

func (h *harness) close() { h.off.Close() }

// closeHarnesses closes the harnesses the current test opened.
func (f *fileRun) closeHarnesses() {
	for _, h := range f.harnesses {
		h.close()
	}
	f.harnesses = nil
}

// apiStatus is the code and reason of an API error, as k8s.* errors carry them.
func apiStatus(err error) (int32, string, bool) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return 0, "", false
	}
	s := st.Status()
	return s.Code, string(s.Reason), true
}
