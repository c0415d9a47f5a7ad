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
	v, err := s.internals.stringify(goja.Undefined(), s.rt.Get("out"))
	if err != nil {
		t.Fatalf("stringify out: %v", err)
	}
	if goja.IsUndefined(v) {
		return "undefined"
	}
	return v.String()
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
	mu      sync.Mutex
	attrs   []slog.Attr
	records *[]logRecord
}

type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

func newLogRecorder() *logRecorder { return &logRecorder{records: new([]logRecord)} }

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]any{}}
	for _, a := range h.attrs {
		rec.Attrs[a.Key] = a.Value.Any()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.Any()
		return true
	})
	h.mu.Lock()
	*h.records = append(*h.records, rec)
	h.mu.Unlock()
	return nil
}

func (h *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logRecorder{attrs: append(append([]slog.Attr{}, h.attrs...), attrs...), records: h.records}
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
