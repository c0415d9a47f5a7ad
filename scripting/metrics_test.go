package scripting

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestMetricDeclarationErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, metrics, want string
	}{
		{"not an object", `metrics: [1]`, "m.js:3: 'metrics' must be an object mapping metric names to {type, help, labels, collect}, got an array"},
		{"bad name", `metrics: {
    "web-ready": { type: "gauge", help: "h" } }`, "m.js:4: metric name 'web-ready' is not a Prometheus metric name (letters, digits and underscores, not starting with a digit)"},
		{"reserved prefix", `metrics: {
    jsinformer_mine: { type: "gauge", help: "h", collect: () => [] } }`, "m.js:4: metric name 'jsinformer_mine' uses the prefix jsinformer_, reserved for the runner's own metrics"},
		{"unknown type", `metrics: {
    ready: { type: "summary", help: "h" } }`, "m.js:4: 'metrics.ready.type' must be one of gauge, counter, histogram, got a string (\"summary\")"},
		{"no help", `metrics: {
    ready: { type: "gauge" } }`, "m.js:4: 'metrics.ready.help' must be a non-empty string of at most 1024 characters describing the metric, got undefined"},
		{"key typo", `metrics: {
    ready: { type: "gauge", help: "h", lables: [] } }`, "m.js:4: unknown key 'lables' in 'metrics.ready'; did you mean 'labels'?"},
		{"bad label", `metrics: {
    ready: { type: "gauge", help: "h", labels: ["name", "team-name"] } }`, "m.js:4: 'metrics.ready.labels[1]' must be a label name (letters, digits and underscores, not starting with a digit), got a string (\"team-name\")"},
		{"reserved label", `metrics: {
    ready: { type: "gauge", help: "h", labels: ["__name__"] } }`, "m.js:4: 'metrics.ready.labels[0]' \"__name__\": names starting with __ are reserved by Prometheus"},
		{"label twice", `metrics: {
    ready: { type: "gauge", help: "h", labels: ["name", "name"] } }`, "m.js:4: 'metrics.ready.labels' names \"name\" twice"},
		{"histogram collect", `metrics: {
    took: { type: "histogram", help: "h", collect: () => [] } }`, "m.js:4: 'metrics.took' is a histogram: histograms are updated by handlers with ctx.metrics.took.observe(value, labels) and cannot have collect"},
		{"buckets not increasing", `metrics: {
    took: { type: "histogram", help: "h", buckets: [1, 0.5] } }`, "m.js:4: 'metrics.took.buckets' must be finite numbers in increasing order; [1] is a number (0.5)"},
		{"buckets on a gauge", `metrics: {
    ready: { type: "gauge", help: "h", buckets: [1] } }`, "m.js:4: 'metrics.ready.buckets' is only for histograms; this is a gauge"},
		{"collect not a function", `metrics: {
    ready: { type: "gauge", help: "h", collect: 5 } }`, "m.js:4: 'metrics.ready.collect' must be a function, got a number (5)"},
		{"exposed names collide", `metrics: {
    took: { type: "histogram", help: "h" },
    took_count: { type: "counter", help: "h" } }`, "m.js:5: 'metrics.took' and 'metrics.took_count' would both expose the series took_count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "export default {\n  onAdd() {},\n  " + tt.metrics + ",\n};"
			_, err := instantiate("m.js", src, Options{})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got error\n  %v\nwant\n  %s", err, tt.want)
			}
			if !errors.Is(err, ErrInvalidDefinition) {
				t.Errorf("error does not wrap ErrInvalidDefinition: %v", err)
			}
		})
	}
}

func TestMetricDefinition(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", `export default {
  metrics: {
    ready: { type: "gauge", help: "1 when ready", labels: ["namespace", "name"], collect: () => [] },
    took: { type: "histogram", help: "time", buckets: [0.1, 1] },
    seen_total: { type: "counter", help: "seen" },
  },
};`, Options{})
	defer s.Close()
	want := []MetricSpec{
		{Name: "ready", Help: "1 when ready", Type: Gauge, Labels: []string{"namespace", "name"}, Collect: true, Line: 3},
		{Name: "seen_total", Help: "seen", Type: Counter, Labels: []string{}, Line: 5},
		{Name: "took", Help: "time", Type: Histogram, Buckets: []float64{0.1, 1}, Line: 4},
	}
	got := s.Definition().Metrics
	got[1].Labels = []string{} // nil or empty: both mean none
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Metrics = %+v\nwant %+v", got, want)
	}
}

func TestCollect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, collect string
		limit         int
		want          []MetricSample
		wantErr       string
	}{
		{"from the cache", `(ctx) => ctx.cache.list().map((d) => ({ labels: { namespace: d.metadata.namespace, name: d.metadata.name }, value: d.spec.replicas }))`, 10,
			[]MetricSample{{Labels: []string{"default", "web"}, Value: 3}}, ""},
		{"booleans, numbers and missing labels", `() => [{ labels: { name: 7 }, value: true }, { value: false }]`, 10,
			[]MetricSample{{Labels: []string{"", "7"}, Value: 1}, {Labels: []string{"", ""}, Value: 0}}, ""},
		{"method with this", `function () { return [{ labels: { name: this.help }, value: 1 }]; }`, 10,
			[]MetricSample{{Labels: []string{"", "h"}, Value: 1}}, ""},
		{"a promise", `async () => [{ labels: { name: "a" }, value: 2 }]`, 10,
			[]MetricSample{{Labels: []string{"", "a"}, Value: 2}}, ""},
		{"null is none", `() => null`, 10, nil, ""},
		{"over the limit", `() => [1, 2, 3].map((i) => ({ labels: { name: String(i) }, value: i }))`, 2, nil,
			"m.js: metrics.g.collect returned 3 series; the limit is 2 per family (--metric-series-limit)"},
		{"duplicate series", `() => [{ labels: { name: "a" }, value: 1 }, { labels: { name: "a" }, value: 2 }]`, 10, nil,
			`m.js: metrics.g.collect returned two samples with the same labels {namespace="",name="a"} (element 1); each series must be returned once`},
		{"unknown label", `() => [{ labels: { nmae: "a" }, value: 1 }]`, 10, nil, //nolint:misspell // the typo is the test
			"m.js: metrics.g.collect returned element 0: unknown label 'nmae' for g; did you mean 'name'?"},
		{"label too long", `() => [{ labels: { name: "x".repeat(300) }, value: 1 }]`, 10, nil,
			"m.js: metrics.g.collect returned element 0: label name is 300 characters long; the limit is 256"},
		{"label an object", `() => [{ labels: { name: {} }, value: 1 }]`, 10, nil,
			"m.js: metrics.g.collect returned element 0: label name must be a string, number or boolean, got an object"},
		{"value missing", `() => [{ labels: {}, vlaue: 1 }]`, 10, nil,
			"m.js: metrics.g.collect returned element 0 with the unknown key 'vlaue'; a sample is { labels, value }"},
		{"value a string", `() => [{ value: "1" }]`, 10, nil,
			"m.js: metrics.g.collect returned element 0 whose value is a string (\"1\"), not a number or boolean"},
		{"not an array", `() => ({})`, 10, nil, "m.js: metrics.g.collect must return an array of { labels, value }, got an object"},
		{"throws", `() => { throw new Error("boom"); }`, 10, nil, "m.js:3:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "m.js", fmt.Sprintf(`export default {
  metrics: { g: { type: "gauge", help: "h", labels: ["namespace", "name"],
    collect: %s } },
};`, tt.collect), Options{})
			defer s.Close()
			got, err := s.Collect("g", Event{Cache: &fakeCache{objs: []Object{sample()}}}, tt.limit)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("Collect error = %v, want %s", err, tt.wantErr)
				}
				if strings.Contains(tt.name, "limit") && !errors.Is(err, ErrSeriesLimit) {
					t.Errorf("error does not wrap ErrSeriesLimit: %v", err)
				}
			case err != nil:
				t.Fatalf("Collect: %v", err)
			case !reflect.DeepEqual(got, tt.want):
				t.Errorf("Collect = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCollectTimesOut(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", `export default {
  metrics: { g: { type: "gauge", help: "h", collect: () => { for (;;) {} } } },
};`, Options{Timeout: 50 * 1e6})
	defer s.Close()
	if _, err := s.Collect("g", Event{}, 10); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Collect error = %v, want a timeout", err)
	}
	// The runtime is usable afterwards: the family simply failed this once.
	if _, err := s.Collect("nope", Event{}, 10); err != nil {
		t.Fatalf("Collect of an unknown family: %v", err)
	}
}

// recordingMetrics is a Metrics that records each call.
type recordingMetrics struct {
	mu    sync.Mutex
	calls []string
	err   error
}

func (r *recordingMetrics) record(op, family string, labels []string, v float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("%s %s %q %v", op, family, labels, v))
	return r.err
}

func (r *recordingMetrics) Add(f string, l []string, n float64) error {
	return r.record("add", f, l, n)
}
func (r *recordingMetrics) Set(f string, l []string, v float64) error {
	return r.record("set", f, l, v)
}
func (r *recordingMetrics) Observe(f string, l []string, v float64) error {
	return r.record("observe", f, l, v)
}

func TestCtxMetrics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, call string
		want       []string
		wantErr    string
	}{
		{"inc", `ctx.metrics.done_total.inc({ namespace: "web" })`, []string{`add done_total ["web"] 1`}, ""},
		{"inc by n", `ctx.metrics.done_total.inc({ namespace: "web" }, 3)`, []string{`add done_total ["web"] 3`}, ""},
		{"inc without labels", `ctx.metrics.done_total.inc()`, []string{`add done_total [""] 1`}, ""},
		{"gauge set and dec", `ctx.metrics.depth.set(5); ctx.metrics.depth.dec(undefined, 2)`, []string{`set depth [] 5`, `add depth [] -2`}, ""},
		{"observe", `ctx.metrics.took.observe(0.25, { step: "apply" })`, []string{`observe took ["apply"] 0.25`}, ""},
		{"counter down", `ctx.metrics.done_total.inc({}, -1)`, nil, "RangeError: ctx.metrics.done_total.inc: a counter only goes up; n is -1"},
		{"counter dec", `ctx.metrics.done_total.dec()`, nil, "TypeError: ctx.metrics.done_total.dec: done_total is a counter; use inc(labels, n)"},
		{"observe a counter", `ctx.metrics.done_total.observe(1)`, nil, "TypeError: ctx.metrics.done_total.observe: done_total is a counter; use inc(labels, n)"},
		{"inc a histogram", `ctx.metrics.took.inc()`, nil, "TypeError: ctx.metrics.took.inc: took is a histogram; use observe(value, labels)"},
		{"NaN", `ctx.metrics.took.observe(NaN)`, nil, "TypeError: ctx.metrics.took.observe: value must be a finite number, got a number (NaN)"},
		{"unknown label", `ctx.metrics.done_total.inc({ ns: "x" })`, nil, "TypeError: ctx.metrics.done_total.inc: unknown label 'ns' for done_total; its labels are [namespace]"},
		{"long label", `ctx.metrics.done_total.inc({ namespace: "x".repeat(257) })`, nil, "RangeError: ctx.metrics.done_total.inc: label namespace is 257 characters long; the limit is 256"},
		{"collect families have no handle", `ctx.metrics.ready.inc()`, nil, "TypeError: Cannot read property 'inc' of undefined"},
		{"read-only", `ctx.metrics.mine = 1`, nil, "TypeError: object is read-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "m.js", `export default {
  metrics: {
    done_total: { type: "counter", help: "h", labels: ["namespace"] },
    depth: { type: "gauge", help: "h" },
    took: { type: "histogram", help: "h", labels: ["step"] },
    ready: { type: "gauge", help: "h", collect: () => [] },
  },
  onAdd(obj, ctx) { `+tt.call+` },
};`, Options{})
			defer s.Close()
			sink := &recordingMetrics{}
			err := s.OnAdd(sample(), Event{Metrics: sink})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("OnAdd error = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("OnAdd: %v", err)
			}
			if !reflect.DeepEqual(sink.calls, tt.want) {
				t.Errorf("calls = %q, want %q", sink.calls, tt.want)
			}
		})
	}
}

func TestCtxMetricsErrors(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", `export default {
  metrics: { done_total: { type: "counter", help: "h", labels: ["namespace"] } },
  onAdd(obj, ctx) { ctx.metrics.done_total.inc({ namespace: "a" }); },
};`, Options{})
	defer s.Close()
	if err := s.OnAdd(sample(), Event{}); err == nil || !strings.Contains(err.Error(), "ctx.metrics is not available here") {
		t.Errorf("without a sink: %v", err)
	}
	sink := &recordingMetrics{err: fmt.Errorf("done_total has 10 series: %w", ErrSeriesLimit)}
	err := s.OnAdd(sample(), Event{Metrics: sink})
	if !errors.Is(err, ErrSeriesLimit) {
		t.Errorf("the sink's error does not reach the caller: %v", err)
	}
}
