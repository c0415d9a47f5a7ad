package enginemetrics_test

import (
	"errors"
	"log/slog"
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/scripting"
)

// A family whose series another script already exposes is refused at its line; a
// histogram's _sum, _count and _bucket count as its own series.
func TestCheckNamesRefusesSharedSeries(t *testing.T) {
	t.Parallel()
	others := map[string][]scripting.MetricSpec{
		"a.js": {{Name: "widgets", Type: scripting.Gauge}},
		"b.js": {{Name: "latency", Type: scripting.Histogram}},
	}
	tests := []struct {
		name    string
		specs   []scripting.MetricSpec
		wantErr bool
	}{
		{"none declared", nil, false},
		{"distinct names", []scripting.MetricSpec{{Name: "gadgets", Type: scripting.Counter, Line: 3}}, false},
		{"same name", []scripting.MetricSpec{{Name: "widgets", Type: scripting.Counter, Line: 7}}, true},
		{"a histogram's series", []scripting.MetricSpec{{Name: "latency_count", Type: scripting.Gauge, Line: 7}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := enginemetrics.CheckNames("c.js", tt.specs, maps.All(others))
			if (err != nil) != tt.wantErr {
				t.Fatalf("CheckNames = %v, want error %v", err, tt.wantErr)
			}
			var se *scripting.ScriptError
			if tt.wantErr && (!errors.As(err, &se) || se.File != "c.js" || se.Line != 7 || !errors.Is(err, scripting.ErrInvalidDefinition)) {
				t.Errorf("error %v is not a definition error of c.js at line 7", err)
			}
		})
	}
}

// A family without collect keeps at most the series limit; one more is refused with
// ErrSeriesLimit and counted, and the scrape serves the rest.
func TestLiveFamilySeriesLimit(t *testing.T) {
	t.Parallel()
	const limit = 2
	m := enginemetrics.NewScripts(limit, 0)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m, m.Errors())
	vm := m.NewVersion("s.js", []scripting.MetricSpec{{Name: "hits", Help: "h", Type: scripting.Counter, Labels: []string{"path"}}}, nil, slog.New(slog.DiscardHandler))
	m.Serve(vm, "s.js")
	sink := vm.Sink()
	for _, path := range []string{"/a", "/b", "/a"} {
		if err := sink.Add("hits", []string{path}, 1); err != nil {
			t.Fatalf("add %s: %v", path, err)
		}
	}
	if err := sink.Add("hits", []string{"/c"}, 1); !errors.Is(err, scripting.ErrSeriesLimit) {
		t.Fatalf("a third series: %v, want ErrSeriesLimit", err)
	}
	if n := testutil.CollectAndCount(m, "hits"); n != limit {
		t.Errorf("scrape serves %d series of hits, want %d", n, limit)
	}
	errs := testutil.ToFloat64(m.Errors().(*prometheus.CounterVec).WithLabelValues("s.js", "hits", "limit"))
	if errs != 1 {
		t.Errorf("limit errors counted %v, want 1", errs)
	}
	m.Withdraw(vm)
	if n := testutil.CollectAndCount(m, "hits"); n != 0 {
		t.Errorf("a withdrawn version still serves %d series", n)
	}
}
