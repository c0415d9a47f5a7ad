package engine_test

import (
	"fmt"
	"testing"

	"github.com/jsinformer/jsinformer/status"
)

// Three versions of a script whose reconcile runs long, saved in quick succession, never
// reconcile at the same time, and an older version never reconciles after a newer one began.
func TestReconcileVersionsNeverOverlap(t *testing.T) {
	t.Parallel()
	ns := uniqueName("reconcile-order")
	script := func(tag string) string {
		return fmt.Sprintf(`export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  reconcile(key) {
    log.info("reconcile", { edge: "begin", tag: %q });
    const until = Date.now() + 600;
    while (Date.now() < until) {}
    log.info("reconcile", { edge: "end", tag: %q });
  },
};`, ns, tag, tag)
	}
	r := startEngine(t, map[string]string{"slow.js": script("v1")}, nil)
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "c", nil, nil))
	waitRunning(t, r.engine, "slow.js", hashOf(script("v1")), ns+"/c")
	r.write(t, "slow.js", script("v2"))
	waitLoad(t, r, "slow.js", status.LoadReloaded, hashOf(script("v2")))
	r.write(t, "slow.js", script("v3"))
	r.calls.waitFor(t, "v3 reconciled", 1, call{Script: "slow.js", Version: hashOf(script("v3")), Event: "reconcile", Result: "ok"}.match)
	r.calls.complete(t)

	// The edges every run logged, in the order they were logged.
	running, newest := "", 0
	for _, l := range linesOf(r.calls.find(call{Script: "slow.js", Event: "reconcile"}.match)) {
		tag, edge := lineAttr(l, "tag"), lineAttr(l, "edge")
		var n int
		fmt.Sscanf(tag, "v%d", &n) //nolint:errcheck // tags are ours
		switch edge {
		case "begin":
			if running != "" {
				t.Fatalf("%s began while %s was reconciling", tag, running)
			}
			if n < newest {
				t.Fatalf("%s reconciled after v%d had begun", tag, newest)
			}
			running, newest = tag, n
		case "end":
			running = ""
		}
	}
}
