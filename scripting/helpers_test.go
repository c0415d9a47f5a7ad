package scripting

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// newTestScript compiles src as file and instantiates it, failing the test on any error.
func newTestScript(t testing.TB, file, src string, opts Options) *Script {
	t.Helper()
	p, err := Compile(file, []byte(src))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	s, err := p.Instantiate(opts)
	if err != nil {
		t.Fatalf("Instantiate: %v", err)
	}
	return s
}

// instantiate compiles and instantiates, returning the first error.
func instantiate(file, src string, opts Options) (*Script, error) {
	p, err := Compile(file, []byte(src))
	if err != nil {
		return nil, err
	}
	return p.Instantiate(opts)
}

// outJSON returns JSON.stringify(globalThis.out), where test scripts leave what they saw.
func outJSON(t testing.TB, s *Script) string {
	t.Helper()
	var out string
	onRuntime(t, s, func(in *instance) {
		v, err := in.internals.stringify(goja.Undefined(), in.rt.Get("out"))
		if err != nil {
			t.Errorf("stringify out: %v", err)
		}
		if v == nil || goja.IsUndefined(v) {
			out = "undefined"
			return
		}
		out = v.String()
	})
	return out
}

// onRuntime runs fn on the goroutine that owns s's current runtime.
func onRuntime(t testing.TB, s *Script, fn func(in *instance)) {
	t.Helper()
	in := current(s)
	if in == nil {
		t.Fatal("the script has no runtime")
	}
	if err := s.exec(in, "test", func(in *instance) error { fn(in); return nil }); err != nil {
		t.Fatal(err)
	}
}

// current is s's current instance, or nil.
func current(s *Script) *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// sample is a small Deployment-like object in unstructured form.
func sample() Object {
	return Object{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "default", "resourceVersion": "7", "generation": int64(2),
			"labels": map[string]any{"app": "web", "app.kubernetes.io/name": "web"},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"paused":   false,
			"ratio":    0.5,
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "nginx:1.27"},
				map[string]any{"name": "sidecar", "image": "envoy:1.30"},
			}}},
		},
		"status": nil,
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logRecorder is a slog.Handler keeping records for inspection.
type logRecorder struct {
	mu      *sync.Mutex // shared by the recorders WithAttrs derives
	attrs   []slog.Attr
	records *[]logRecord
}

type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

func newLogRecorder() *logRecorder {
	return &logRecorder{mu: new(sync.Mutex), records: new([]logRecord)}
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]any{}}
	for _, a := range h.attrs {
		rec.Attrs[a.Key] = attrValue(a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = attrValue(a.Value)
		return true
	})
	h.mu.Lock()
	*h.records = append(*h.records, rec)
	h.mu.Unlock()
	return nil
}

// attrValue is v as a Go value; a group becomes a map of its attributes.
func attrValue(v slog.Value) any {
	if v.Kind() != slog.KindGroup {
		return v.Any()
	}
	m := map[string]any{}
	for _, a := range v.Group() {
		m[a.Key] = attrValue(a.Value)
	}
	return m
}

func (h *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logRecorder{attrs: append(append([]slog.Attr{}, h.attrs...), attrs...), mu: h.mu, records: h.records}
}

func (h *logRecorder) WithGroup(string) slog.Handler { return h }

func (h *logRecorder) all() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]logRecord(nil), *h.records...)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
