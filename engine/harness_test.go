package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/status"
)

var env *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &env) }

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configmapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// record is one captured log line: message plus attributes rendered as strings.
type record struct {
	msg   string
	level slog.Level
	attrs map[string]string
}

func (r record) String() string { return fmt.Sprintf("%s %s %v", r.level, r.msg, r.attrs) }

// sink captures log records. Tests wait on the state API and the trace records (runner.calls)
// instead, since log wording may change; the log is for lines that are themselves the
// behaviour under test (a WARN or ERROR operators rely on, said once), and for failure dumps.
type sink struct {
	mu      sync.Mutex
	records []record
	attrs   []slog.Attr
	parent  *sink
}

func (s *sink) root() *sink {
	if s.parent != nil {
		return s.parent.root()
	}
	return s
}

func (s *sink) Enabled(context.Context, slog.Level) bool { return true }

func (s *sink) Handle(_ context.Context, r slog.Record) error {
	rec := record{msg: r.Message, level: r.Level, attrs: map[string]string{}}
	var add func(a slog.Attr) bool
	add = func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindGroup { // a script's log fields ("attrs"), kept flat here
			for _, g := range a.Value.Group() {
				add(g)
			}
			return true
		}
		rec.attrs[a.Key] = a.Value.Resolve().String()
		return true
	}
	for _, a := range s.attrs {
		add(a)
	}
	r.Attrs(add)
	root := s.root()
	root.mu.Lock()
	root.records = append(root.records, rec)
	root.mu.Unlock()
	return nil
}

func (s *sink) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &sink{attrs: append(append([]slog.Attr{}, s.attrs...), attrs...), parent: s}
}

func (s *sink) WithGroup(string) slog.Handler { return s }

// find returns the records matching pred.
func (s *sink) find(pred func(record) bool) []record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []record
	for _, r := range s.records {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

// waitFor polls until n records match pred, and returns them.
func (s *sink) waitFor(t *testing.T, what string, n int, pred func(record) bool) []record {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got := s.find(pred); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d× %s; log so far:\n%s", n, what, s.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *sink) dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.records {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

// msg matches records with this message and these attributes.
func msg(m string, kv ...string) func(record) bool {
	return func(r record) bool {
		if r.msg != m {
			return false
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if r.attrs[kv[i]] != kv[i+1] {
				return false
			}
		}
		return true
	}
}

// runner is an engine running in the test, with its scripts folder and log.
type runner struct {
	engine *engine.Engine
	dir    string
	log    *sink
	calls  *calls // the engine's trace records, from before it ran
	dyn    dynamic.Interface
	done   chan error
	cancel context.CancelFunc
	cache  *cacheCheck // every object entering an informer's cache, verified unchanged at the end
}

// startEngine writes scripts into a new folder and runs the engine until the test ends.
func startEngine(t *testing.T, scripts map[string]string, tweak func(*engine.Config)) *runner {
	t.Helper()
	return startEngineOn(t, controlplane.Require(t, env), scripts, tweak)
}

// startEngineOn is startEngine against the control plane cp.
func startEngineOn(t *testing.T, cp *controlplane.ControlPlane, scripts map[string]string, tweak func(*engine.Config)) *runner {
	t.Helper()
	return startEngineChecked(t, cp, scripts, tweak, true)
}

// startEngineChecked is startEngineOn; checkCache false leaves out the check that cached
// objects never change (cacheCheck), which keeps a copy of every object cached: for tests
// of the live heap.
func startEngineChecked(t *testing.T, cp *controlplane.ControlPlane, scripts map[string]string, tweak func(*engine.Config), checkCache bool) *runner {
	t.Helper()
	r := &runner{dir: t.TempDir(), log: &sink{}, done: make(chan error, 1)}
	r.dyn = dynamic.NewForConfigOrDie(cp.Config)
	for name, src := range scripts {
		r.write(t, name, src)
	}
	ready := make(chan struct{})
	cfg := engine.Config{
		RESTConfig: cp.Config, ScriptsDir: r.dir, Logger: slog.New(r.log),
		HandlerTimeout: 2 * time.Second, Debounce: 20 * time.Millisecond,
		OnReady: func() { close(ready) },
	}
	if tweak != nil {
		tweak(&cfg)
	}
	r.cache = newCacheCheck()
	if checkCache {
		engine.SetOnCachedForTest(&cfg, r.cache.record)
	}
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	r.engine = e
	r.calls = watchCalls(t, e) // its cleanup joins the drain after the engine stopped
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- e.Run(ctx) }()
	// A stop waits for the call running, up to its handler timeout (and a replica under
	// --shard-cache hands over first, up to a lease duration).
	limit := max(30*time.Second, cfg.HandlerTimeout+10*time.Second)
	if cfg.Sharding != nil && cfg.ShardCache {
		limit += cfg.Sharding.LeaseDuration
	}
	t.Cleanup(func() {
		if stopped, err := r.stop(limit); !stopped {
			t.Errorf("engine did not stop within %v", limit)
		} else if err != nil {
			t.Errorf("engine Run returned %v", err)
		} else {
			r.cache.verify(t)
		}
	})
	select {
	case <-ready:
	case err := <-r.done:
		t.Fatalf("engine stopped before ready: %v\n%s", err, r.log.dump())
	case <-time.After(60 * time.Second):
		t.Fatalf("engine not ready within 60s\n%s", r.log.dump())
	}
	return r
}

// stop cancels Run and waits at most limit for it to return; once it has, later calls report
// stopped with a nil error.
func (r *runner) stop(limit time.Duration) (stopped bool, err error) {
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return true, err
	case <-time.After(limit):
		return false, nil
	}
}

func (r *runner) write(t *testing.T, name, src string) {
	t.Helper()
	path := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// namespace creates a namespace named after the test and returns its name.
func (r *runner) namespace(t *testing.T, name string) string {
	t.Helper()
	r.create(t, namespacesGVR, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
	return name
}

func (r *runner) create(t *testing.T, gvr schema.GroupVersionResource, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	out, err := r.dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
	return out
}

func (r *runner) patch(t *testing.T, gvr schema.GroupVersionResource, ns, name, patch string) {
	t.Helper()
	if err := r.tryPatch(t, gvr, ns, name, patch); err != nil {
		t.Fatal(err)
	}
}

// tryPatch merge-patches an object; unlike patch it may be called from any goroutine.
func (r *runner) tryPatch(t *testing.T, gvr schema.GroupVersionResource, ns, name, patch string) error {
	_, err := r.dyn.Resource(gvr).Namespace(ns).Patch(t.Context(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("patch %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	return nil
}

func (r *runner) delete(t *testing.T, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	if err := r.dyn.Resource(gvr).Namespace(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

func deployment(ns, name, image string, replicas int64) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": image}}},
			},
		}}
}

func configmap(ns, name string, labels map[string]any, data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels}, "data": data}
}

// waitInformers polls until exactly n informers run and each key contains every want.
func waitInformers(t *testing.T, r *runner, n int, want ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		active := r.engine.ActiveInformers()
		if len(active) == n && allContain(active, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("informers = %v, want %d containing %q", active, n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func allContain(active map[string]int, want []string) bool {
	for key := range active {
		for _, w := range want {
			if !strings.Contains(key, w) {
				return false
			}
		}
	}
	return true
}

func unstructuredOf(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	return unstructured.NestedString(obj, fields...)
}

// waitStatus waits until the engine's Status satisfies cond, and returns that Status. It wakes
// on every change of the state API and polls besides, for the counters, which move silently.
func waitStatus(t *testing.T, e *engine.Engine, what string, cond func(status.Status) bool) status.Status {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		changed := e.StatusChanged()
		st := e.Status()
		if cond(st) {
			return st
		}
		select {
		case <-changed:
		case <-poll.C:
		case <-deadline.C:
			b, _ := json.MarshalIndent(st, "", "  ")
			t.Fatalf("timed out waiting for %s; status:\n%s", what, b)
		}
	}
}

// waitScript waits until the named script's status satisfies cond, and returns it.
func waitScript(t *testing.T, e *engine.Engine, name, what string, cond func(status.ScriptStatus) bool) status.ScriptStatus {
	t.Helper()
	st := waitStatus(t, e, name+": "+what, func(st status.Status) bool {
		s, ok := st.Script(name)
		return ok && cond(s)
	})
	s, _ := st.Script(name)
	return s
}

// lastLoad is the newest load of s with one of results; ok is false when there is none.
func lastLoad(s status.ScriptStatus, results ...status.LoadResult) (status.LoadStatus, bool) {
	for i := len(s.Loads) - 1; i >= 0; i-- {
		if slices.Contains(results, s.Loads[i].Result) {
			return s.Loads[i], true
		}
	}
	return status.LoadStatus{}, false
}

// loads counts the loads of s with result.
func loads(s status.ScriptStatus, result status.LoadResult) int {
	n := 0
	for _, l := range s.Loads {
		if l.Result == result {
			n++
		}
	}
	return n
}

// waitLoad waits until script has a load with result (of content hash, unless hash is "")
// and returns the newest such load.
func waitLoad(t *testing.T, r *runner, script string, result status.LoadResult, hash string) status.LoadStatus {
	t.Helper()
	var got status.LoadStatus
	waitScript(t, r.engine, script, fmt.Sprintf("a load %s %s", result, hash), func(s status.ScriptStatus) bool {
		for i := len(s.Loads) - 1; i >= 0; i-- {
			if l := s.Loads[i]; l.Result == result && (hash == "" || l.Hash == hash) {
				got = l
				return true
			}
		}
		return false
	})
	return got
}

// countLoads is how many loads of script with result the state API remembers now.
func countLoads(r *runner, script string, result status.LoadResult) int {
	s, _ := r.engine.Status().Script(script)
	return loads(s, result)
}

// waitGone waits until script has been unloaded and its last version is done.
func waitGone(t *testing.T, r *runner, script string) {
	t.Helper()
	waitStatus(t, r.engine, script+" unloaded", func(st status.Status) bool {
		_, ok := st.Script(script)
		return !ok
	})
}
