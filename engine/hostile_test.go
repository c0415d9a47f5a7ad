package engine_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/dop251/goja"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// stuckExpr returns a JS expression that runs for about d inside one Go built-in the timeout
// cannot interrupt: a backreference sends goja to regexp2, whose backtracking on (a+)+
// doubles with every "a". Calibrated here, where -race slows goja too.
func stuckExpr(t *testing.T, d time.Duration) string {
	t.Helper()
	const expr = `/^(a+)+\1$/.test("a".repeat(%d) + "b")`
	n, took := 14, time.Duration(0)
	for took < 20*time.Millisecond {
		n++
		start := time.Now()
		if _, err := goja.New().RunString(fmt.Sprintf(expr, n)); err != nil {
			t.Fatal(err)
		}
		took = time.Since(start)
	}
	n += int(math.Ceil(math.Log2(float64(d) / float64(took))))
	return fmt.Sprintf(expr, n)
}

// A handler stuck in a built-in is reported and abandoned: later events are handled by a fresh
// runtime without waiting for it, and Run still returns promptly while another call is stuck.
func TestStuckHandlerIsAbandoned(t *testing.T) {
	t.Parallel()
	const stuckFor = 8 * time.Second
	const timeout = 200 * time.Millisecond
	ns := uniqueName("stuck")
	reg := prometheus.NewPedanticRegistry()
	r := startEngine(t, map[string]string{"stuck.js": watchScript(ns, `  onAdd(cm) {
    log.info("begin", { name: cm.metadata.name });
    if (cm.metadata.name.startsWith("stuck")) `+stuckExpr(t, stuckFor)+`;
    log.info("handled", { name: cm.metadata.name });
  },`)}, func(c *engine.Config) { c.Registerer = reg; c.HandlerTimeout = timeout })
	r.namespace(t, ns)

	start := time.Now()
	r.create(t, configmapsGVR, configmap(ns, "stuck-1", nil, nil))
	r.create(t, configmapsGVR, configmap(ns, "after", nil, nil))
	r.calls.waitFor(t, "the event after the stuck one", 1, call{Script: "stuck.js", Object: ns + "/after", Handler: "onAdd", Result: "ok",
		Logged: "handled"}.match)
	if took := time.Since(start); took > stuckFor/2 {
		t.Errorf("the next event waited %v behind the stuck call, want about %v", took, timeout+scripting.DefaultGrace)
	}
	waitScript(t, r.engine, "stuck.js", "the stuck call counted", func(s status.ScriptStatus) bool {
		return s.Handlers["onAdd"].Stuck == 1
	})
	// The operator's contract: the stuck call is reported, and its runtime's abandonment.
	if got := r.log.find(msg("script handler failed", "handler", "onAdd", "object", ns+"/stuck-1", "stuck", "true")); len(got) != 1 {
		t.Errorf("stuck call reported %d times, want once", len(got))
	}
	r.log.waitFor(t, "the abandonment", 1, msg("script call stuck; abandoned its runtime", "script", "stuck.js"))
	stuck := metricValue(t, reg, "jsinformer_handler_calls_total", map[string]string{"script": "stuck.js", "handler": "onAdd", "result": "stuck"})
	if stuck != 1 {
		t.Errorf("jsinformer_handler_calls_total{result=stuck} = %v, want 1", stuck)
	}

	// Shut down while a second call is stuck.
	r.create(t, configmapsGVR, configmap(ns, "stuck-2", nil, nil))
	waitInFlight(t, r, "stuck.js", ns+"/stuck-2")
	start = time.Now()
	if stopped, err := r.stop(stuckFor / 2); !stopped || err != nil {
		t.Fatalf("Run did not return within %v of cancel while a call was stuck (err %v)", stuckFor/2, err)
	}
	t.Logf("Run returned %v after cancel", time.Since(start).Round(time.Millisecond))
}

// Saving back the running content after a broken save changes nothing: no replay.
func TestSavingBackTheRunningVersionDoesNothing(t *testing.T) {
	t.Parallel()
	ns := uniqueName("save-back")
	good := watchScript(ns, `  onAdd(cm, ctx) { log.info("add", { name: cm.metadata.name, initial: ctx.isInInitialList }); },`)
	r := startEngine(t, map[string]string{"a.js": good}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "one", nil, nil))
	added := func(name string) func(inspection.TraceRecord) bool {
		return call{Script: "a.js", Event: "add", Object: ns + "/" + name, Handler: "onAdd", Result: "ok"}.match
	}
	r.calls.waitFor(t, "the add", 1, added("one"))
	r.write(t, "a.js", "export default {")
	waitLoad(t, r, "a.js", status.LoadFailed, hashOf("export default {"))
	r.write(t, "a.js", good)
	waitScript(t, r.engine, "a.js", "the save back serving, the failure over", func(s status.ScriptStatus) bool {
		cur, ok := s.Current()
		return ok && s.Hash == hashOf(good) && cur.Hash == hashOf(good) && len(s.Versions) == 1
	})
	r.create(t, configmapsGVR, configmap(ns, "two", nil, nil))
	r.calls.waitFor(t, "a later add", 1, added("two"))
	if got := r.calls.find(added("one")); len(got) != 1 {
		t.Errorf("%q was handled %d times, want once: the save back replayed the cache", "one", len(got))
	}
	if n := countLoads(r, "a.js", status.LoadLoaded); n != 1 {
		t.Errorf("script loaded %d times, want once", n)
	}
	if n := countLoads(r, "a.js", status.LoadReloaded); n != 0 {
		t.Errorf("script reloaded %d times, want never", n)
	}
}
