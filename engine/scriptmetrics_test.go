package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

// series gathers reg and returns the series of family name as "label=value,..." → value.
// A failed Gather fails the test: one script's family must never break the scrape.
func series(t *testing.T, reg prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return scriptSeriesOf(families, name)
}

func scriptSeriesOf(families []*dto.MetricFamily, name string) map[string]float64 {
	var out map[string]float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		out = map[string]float64{}
		for _, m := range f.GetMetric() {
			var pairs []string
			for _, l := range m.GetLabel() {
				pairs = append(pairs, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(pairs, ",")] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return out // nil: the family is not served
}

// waitSeries polls until family name's series satisfy ok.
func waitSeries(t *testing.T, reg prometheus.Gatherer, name, what string, ok func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	return waitSeriesLogged(t, reg, nil, name, what, ok)
}

// waitSeriesLogged is waitSeries, with r's log in the failure.
func waitSeriesLogged(t *testing.T, reg prometheus.Gatherer, r *runner, name, what string, ok func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := series(t, reg, name)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			log := ""
			if r != nil {
				log = "\nlog:\n" + r.log.dump()
			}
			t.Fatalf("%s: %s is %v%s", what, name, got, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func equalSeries(want map[string]float64) func(map[string]float64) bool {
	return func(got map[string]float64) bool {
		if len(got) != len(want) || (want == nil) != (got == nil) {
			return false
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				return false
			}
		}
		return true
	}
}

const replicasScript = `export default {
  watch: { resource: "apps/v1/deployments", namespace: "%s" },
  metrics: {
    %s: {
      type: "gauge", help: "spec.replicas of each Deployment", labels: ["namespace", "name"],
      collect: (ctx) => ctx.cache.list().map((d) => ({
        labels: { namespace: d.metadata.namespace, name: d.metadata.name }, value: d.spec.replicas * %d })),
    },
    test_deployment_updates_total: { type: "counter", help: "updates seen", labels: ["name"] },
  },
  onUpdate(old, cur, ctx) { ctx.metrics.test_deployment_updates_total.inc({ name: cur.metadata.name }); },
};
`

// TestScriptMetricsFollowTheCache: a script's families appear once it loads, follow the
// objects (no stale series after a delete), change with a save — and no scrape ever sees
// both versions' families — and vanish when the file is deleted.
func TestScriptMetricsFollowTheCache(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	ns := uniqueName("script-metrics")
	r := startEngine(t, nil, func(c *engine.Config) { c.Registerer = reg })
	r.namespace(t, ns)
	r.create(t, deploymentsGVR, deployment(ns, "web", "nginx", 2))
	r.create(t, deploymentsGVR, deployment(ns, "api", "nginx", 3))
	r.write(t, "replicas.js", fmt.Sprintf(replicasScript, ns, "test_deployment_replicas", 1))

	waitSeries(t, reg, "test_deployment_replicas", "after load", equalSeries(map[string]float64{
		"name=api,namespace=" + ns: 3, "name=web,namespace=" + ns: 2}))
	r.patch(t, deploymentsGVR, ns, "web", `{"spec":{"replicas":5}}`)
	waitSeries(t, reg, "test_deployment_replicas", "after a change", equalSeries(map[string]float64{
		"name=api,namespace=" + ns: 3, "name=web,namespace=" + ns: 5}))
	waitSeries(t, reg, "test_deployment_updates_total", "the handler's counter", equalSeries(map[string]float64{"name=web": 1}))

	// Scrape continuously through the save: each scrape has the old family or the new one.
	var stop atomic.Bool
	var scrapes sync.WaitGroup
	var both, failed atomic.Int32
	scrapes.Go(func() {
		for !stop.Load() {
			families, err := reg.Gather()
			if err != nil {
				failed.Add(1)
				continue
			}
			if scriptSeriesOf(families, "test_deployment_replicas") != nil && scriptSeriesOf(families, "test_deployment_replicas_v2") != nil {
				both.Add(1)
			}
		}
	})
	r.write(t, "replicas.js", fmt.Sprintf(replicasScript, ns, "test_deployment_replicas_v2", 10))
	waitSeries(t, reg, "test_deployment_replicas_v2", "after a save", equalSeries(map[string]float64{
		"name=api,namespace=" + ns: 30, "name=web,namespace=" + ns: 50}))
	stop.Store(true)
	scrapes.Wait()
	if both.Load() > 0 || failed.Load() > 0 {
		t.Errorf("during the reload %d scrapes saw both versions' families and %d failed", both.Load(), failed.Load())
	}
	if got := series(t, reg, "test_deployment_replicas"); got != nil {
		t.Errorf("the old version's family is still served: %v", got)
	}

	r.delete(t, deploymentsGVR, ns, "api")
	waitSeries(t, reg, "test_deployment_replicas_v2", "after a delete", equalSeries(map[string]float64{"name=web,namespace=" + ns: 50}))

	if err := os.Remove(filepath.Join(r.dir, "replicas.js")); err != nil {
		t.Fatal(err)
	}
	waitSeries(t, reg, "test_deployment_replicas_v2", "after the file is deleted", equalSeries(nil))
	if got := series(t, reg, "test_deployment_updates_total"); got != nil {
		t.Errorf("the handler-updated family outlived its script: %v", got)
	}
}

// TestScriptMetricFailuresAreContained: a collect that throws, one that runs past the handler
// timeout and one over the series limit are each left out of the scrape and counted, while
// the other families are served; a handler-updated family stops at the limit with an error.
func TestScriptMetricFailuresAreContained(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	ns := uniqueName("script-metrics-fail")
	r := startEngine(t, nil, func(c *engine.Config) {
		c.Registerer, c.MetricSeriesLimit, c.HandlerTimeout = reg, 3, 500*time.Millisecond
	})
	r.namespace(t, ns)
	for i := range 5 {
		r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("cm-%d", i), nil, nil))
	}
	r.write(t, "contained.js", `export default {
  watch: { resource: "v1/configmaps", namespace: "`+ns+`" },
  metrics: {
    test_good: { type: "gauge", help: "objects", collect: (ctx) => [{ value: ctx.cache.list().length }] },
    test_throws: { type: "gauge", help: "throws", collect: () => { throw new Error("no"); } },
    test_spins: { type: "gauge", help: "never returns", collect: () => { for (;;) {} } },
    test_too_many: { type: "gauge", help: "a series per object", labels: ["name"],
      collect: (ctx) => ctx.cache.list().map((c) => ({ labels: { name: c.metadata.name }, value: 1 })) },
    test_seen_total: { type: "counter", help: "a series per object", labels: ["name"] },
  },
  onAdd(obj, ctx) { ctx.metrics.test_seen_total.inc({ name: obj.metadata.name }); },
};
`)
	waitSeries(t, reg, "test_good", "the good family", equalSeries(map[string]float64{"": 5}))
	for _, tt := range []struct{ metric, reason string }{
		{"test_throws", "error"}, {"test_spins", "timeout"}, {"test_too_many", "limit"}, {"test_seen_total", "limit"},
	} {
		labels := map[string]string{"script": "contained.js", "metric": tt.metric, "reason": tt.reason}
		if n := metricValue(t, reg, "jsinformer_script_metric_errors_total", labels); n < 1 {
			t.Errorf("jsinformer_script_metric_errors_total%v = %v, want ≥ 1", labels, n)
		}
	}
	for _, name := range []string{"test_throws", "test_spins", "test_too_many"} {
		if got := series(t, reg, name); got != nil {
			t.Errorf("%s is served: %v", name, got)
		}
	}
	if got := series(t, reg, "test_seen_total"); len(got) != 3 {
		t.Errorf("test_seen_total has %d series, want the limit, 3: %v", len(got), got)
	}
	failures := r.calls.waitFor(t, "the onAdd calls past the limit failing", 2, call{Script: "contained.js", Handler: "onAdd", Result: "error"}.match)
	if !strings.Contains(failures[0].Error, "series, the limit per family (--metric-series-limit)") {
		t.Errorf("the handler's error does not name the limit: %s", failures[0].Error)
	}
}

// TestScriptMetricNamesAreShared: a family another script declares is a load error at the
// family's line; once the first script drops it, the second loads.
func TestScriptMetricNamesAreShared(t *testing.T) {
	t.Parallel()
	const family = `export default {
  watch: "v1/namespaces",
  metrics: {
    test_shared: { type: "gauge", help: "h", collect: () => [] },
  },
};
`
	r := startEngine(t, map[string]string{"a.js": family}, nil)
	r.write(t, "b.js", family)
	failed := waitLoad(t, r, "b.js", status.LoadFailed, "")
	want := "b.js:4: metric 'test_shared' would expose the series test_shared, which a.js already declares; metric names are shared by every script"
	if failed.Error == nil || failed.Error.Message != want {
		t.Errorf("error = %+v, want %q", failed.Error, want)
	}
	r.write(t, "a.js", strings.Replace(family, "test_shared", "test_mine", 1))
	waitLoad(t, r, "a.js", status.LoadReloaded, "")
	r.write(t, "b.js", family+"// saved again\n")
	waitScript(t, r.engine, "b.js", "b.js serving its second save", func(s status.ScriptStatus) bool {
		cur, ok := s.Current()
		return ok && cur.Hash == hashOf(family+"// saved again\n")
	})
}
