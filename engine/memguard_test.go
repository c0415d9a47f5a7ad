package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

// leakScript keeps 4 MiB more at module level every second.
const leakScript = `const kept = [];
export default {
  watch: "configmaps",
  schedule: [{ every: "1s", run() { for (let i = 0; i < 4; i++) kept.push("x".repeat(1 << 20) + kept.length); } }],
};
`

// The memory guard stops the script whose runtime keeps growing, and only it: the healthy
// script next to it keeps handling events, and the stopped one stays stopped until its file
// changes. The heap the guard sees is faked at 90 % of the limit, as the process's real heap
// is shared with the other tests; the scripts' memory is measured for real.
// cmd/runner's TestMemoryGuardUnderALimit runs the same with the process's real heap.
func TestMemoryGuardStopsTheGrowingScript(t *testing.T) {
	t.Parallel()
	const limit = 64 << 20
	ns := uniqueName("memguard")
	reg := prometheus.NewPedanticRegistry()
	r := startEngine(t, map[string]string{
		"leak.js":    leakScript,
		"healthy.js": watchScript(ns, `  onAdd(cm) { log.info("healthy saw", { name: cm.metadata.name }); },`),
	}, func(c *engine.Config) {
		c.Registerer, c.MemoryLimit, c.MemoryCheckInterval = reg, limit, 200*time.Millisecond
		engine.SetHeapForTest(c, func() int64 { return limit * 9 / 10 })
	})
	r.namespace(t, ns)
	eventually(t, "the guard stops leak.js", func() error {
		return wantMetric(t, reg, "jsinformer_memory_guard_stops_total", map[string]string{"script": "leak.js"}, 1)
	})
	if got := metricValue(t, reg, "jsinformer_script_stopped", map[string]string{"script": "leak.js"}); got != 1 {
		t.Errorf("jsinformer_script_stopped{leak.js} = %v, want 1", got)
	}
	if got := metricValue(t, reg, "jsinformer_memory_guard_stops_total", map[string]string{"script": "healthy.js"}); got != 0 {
		t.Errorf("the healthy script was stopped too")
	}
	stopped := waitScript(t, r.engine, "leak.js", "stopped", func(s status.ScriptStatus) bool { return s.State == status.ScriptStopped })
	if v, ok := stopped.Version(hashOf(leakScript)); !ok || (v.State != status.VersionStopped && v.State != status.VersionDone) {
		t.Errorf("leak.js's version = %+v, want stopped", v)
	}
	if l, ok := lastLoad(stopped, status.LoadStopped); !ok || l.Hash != hashOf(leakScript) {
		t.Errorf("loads %+v lack the stop", stopped.Loads)
	}
	if h, _ := r.engine.Status().Script("healthy.js"); h.State != status.ScriptServing {
		t.Errorf("healthy.js is %s, want serving", h.State)
	}
	r.create(t, configmapsGVR, configmap(ns, "after-stop", nil, nil))
	r.calls.waitFor(t, "the healthy script handling an event after the stop", 1,
		call{Script: "healthy.js", Object: ns + "/after-stop", Handler: "onAdd", Result: "ok"}.match)

	// Any new content lifts the stop.
	r.write(t, "leak.js", `export default { watch: "configmaps", onAdd() {} };`)
	eventually(t, "the changed leak.js loads", func() error {
		return wantMetric(t, reg, "jsinformer_script_loads_total", map[string]string{"script": "leak.js", "result": "loaded"}, 2)
	})
	if got := metricValue(t, reg, "jsinformer_script_stopped", map[string]string{"script": "leak.js"}); got != 0 {
		t.Errorf("jsinformer_script_stopped{leak.js} = %v after its file changed, want no series", got)
	}
	if s, _ := r.engine.Status().Script("leak.js"); s.State != status.ScriptServing {
		t.Errorf("leak.js is %s after its file changed, want serving", s.State)
	}
}

// metricValue is the value of the counter or gauge name whose labels include want; 0 when
// there is no such series.
func metricValue(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, want) {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func wantMetric(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string, want float64) error {
	t.Helper()
	if got := metricValue(t, reg, name, labels); got != want {
		return fmt.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
	return nil
}
