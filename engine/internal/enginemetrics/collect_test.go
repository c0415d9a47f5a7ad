package enginemetrics_test

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/scripting"
)

// fakeWorker answers collects on goroutines of its own, each family after hold(family)
// returns; paused, it never gets to them. The test owns the goroutines: release ends every
// hold and join waits for them.
type fakeWorker struct {
	paused  bool
	hold    func(family string)
	running sync.WaitGroup
}

func (w *fakeWorker) QueueCollect(req *enginemetrics.CollectRequest) bool {
	if w.paused {
		return true
	}
	w.running.Go(func() {
		req.Serve(func(family string, _ int) ([]scripting.MetricSample, bool, error) {
			if w.hold != nil {
				w.hold(family)
			}
			return []scripting.MetricSample{{Value: 1}}, false, nil
		})
	})
	return true
}

func gauge(name string) scripting.MetricSpec {
	return scripting.MetricSpec{Name: name, Help: "h", Type: scripting.Gauge, Collect: true}
}

// A scrape waits for the collects until its deadline only: a paused worker's families are
// counted busy, a family still computing at the deadline timeout, and the families answered
// by then — of the same script, of other scripts, and everything else on the registry — are
// served.
func TestCollectDeadline(t *testing.T) {
	t.Parallel()
	const deadline = 300 * time.Millisecond
	m := enginemetrics.NewScripts(100, deadline)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m, m.Errors(), prometheus.NewGauge(prometheus.GaugeOpts{Name: "runner_own", Help: "h"}))
	logger := slog.New(slog.DiscardHandler)

	release := make(chan struct{})
	slow := &fakeWorker{hold: func(family string) {
		if family == "slow_second" {
			<-release
		}
	}}
	ok := &fakeWorker{}
	t.Cleanup(func() {
		close(release)
		slow.running.Wait()
		ok.running.Wait()
	})
	m.Serve(m.NewVersion("paused.js", []scripting.MetricSpec{gauge("paused_family")}, &fakeWorker{paused: true}, logger), "paused.js")
	m.Serve(m.NewVersion("slow.js", []scripting.MetricSpec{gauge("slow_first"), gauge("slow_second")}, slow, logger), "slow.js")
	m.Serve(m.NewVersion("ok.js", []scripting.MetricSpec{gauge("ok_family")}, ok, logger), "ok.js")

	start := time.Now()
	families, err := reg.Gather()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	if took < deadline || took > deadline+time.Second {
		t.Errorf("the scrape took %v, want the deadline %v (plus less than 1s)", took, deadline)
	}
	served := map[string]bool{}
	for _, f := range families {
		served[f.GetName()] = true
	}
	for name, want := range map[string]bool{"runner_own": true, "ok_family": true, "slow_first": true, "slow_second": false, "paused_family": false} {
		if served[name] != want {
			t.Errorf("%s served %v, want %v", name, served[name], want)
		}
	}
	errs := m.Errors().(*prometheus.CounterVec)
	for _, c := range []struct{ script, metric, reason string }{
		{"paused.js", "paused_family", "busy"}, {"slow.js", "slow_second", "timeout"},
		{"slow.js", "slow_first", "busy"}, {"ok.js", "ok_family", "busy"},
	} {
		want := 0.0
		if c.metric == "paused_family" || c.metric == "slow_second" {
			want = 1
		}
		if got := testutil.ToFloat64(errs.WithLabelValues(c.script, c.metric, c.reason)); got != want {
			t.Errorf("errors{%s, %s, %s} = %v, want %v", c.script, c.metric, c.reason, got, want)
		}
	}
}

// queuedWorker never answers; it tells queued when a scrape has queued its request.
type queuedWorker struct{ queued chan struct{} }

func (w *queuedWorker) QueueCollect(*enginemetrics.CollectRequest) bool {
	w.queued <- struct{}{}
	return true
}

// errorSeries is the error series of family metric ("": every family) m exports.
func errorSeries(t *testing.T, m *enginemetrics.Scripts, metric string) int {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Errors())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "metric" && (metric == "" || l.GetValue() == metric) {
					n++
				}
			}
		}
	}
	return n
}

// A version withdrawn or replaced counts no more failures: its error series, once deleted,
// never come back, whatever it still does while it drains.
func TestRetiredVersionLeavesNoErrorSeries(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	counter := scripting.MetricSpec{Name: "seen_total", Help: "h", Type: scripting.Counter, Labels: []string{"name"}}
	tests := []struct {
		name string
		run  func(t *testing.T, m *enginemetrics.Scripts) (metric string)
	}{
		{"a handler past the limit after the script was removed", func(t *testing.T, m *enginemetrics.Scripts) string {
			vm := m.NewVersion("a.js", []scripting.MetricSpec{counter}, nil, logger)
			m.Serve(vm, "a.js")
			_ = vm.Sink().Add("seen_total", []string{"x"}, 1)
			m.Withdraw(vm)
			if err := vm.Sink().Add("seen_total", []string{"y"}, 1); err == nil {
				t.Error("a series past the limit was accepted")
			}
			return ""
		}},
		{"a scrape that gave up after the script was removed", func(t *testing.T, m *enginemetrics.Scripts) string {
			w := &queuedWorker{queued: make(chan struct{})}
			vm := m.NewVersion("a.js", []scripting.MetricSpec{gauge("g")}, w, logger)
			m.Serve(vm, "a.js")
			scraped := make(chan struct{})
			go func() { // joined below: the scrape ends at its deadline
				defer close(scraped)
				_, _ = m.Gather()
			}()
			<-w.queued
			m.Withdraw(vm)
			<-scraped
			return ""
		}},
		{"a replaced version past the limit in a family its successor dropped", func(t *testing.T, m *enginemetrics.Scripts) string {
			old := m.NewVersion("a.js", []scripting.MetricSpec{counter}, nil, logger)
			m.Serve(old, "a.js")
			_ = old.Sink().Add("seen_total", []string{"x"}, 1)
			m.Serve(m.NewVersion("a.js", []scripting.MetricSpec{gauge("g")}, &fakeWorker{paused: true}, logger), "a.js")
			_ = old.Sink().Add("seen_total", []string{"y"}, 1)
			m.Withdraw(old)
			return "seen_total"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := enginemetrics.NewScripts(1, 100*time.Millisecond)
			metric := tt.run(t, m)
			if n := errorSeries(t, m, metric); n != 0 {
				t.Errorf("%d error series of a.js %s left behind", n, metric)
			}
		})
	}
}
