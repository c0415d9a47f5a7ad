package engine_test

import (
	"fmt"
	"testing"

	"github.com/jsinformer/jsinformer/status"
)

// TestSaveDuringAReplaySupersedesIt saves a new content while the previous save is still
// replaying the cache into its index stage, stalled inside a batch of index calls: that
// version never serves, its stalled call is interrupted, and the newest version serves with
// every cached object indexed by its own function. The event queues of the abandoned version
// and of the one it was replacing hand their chunks on to the next (the chunk pool of package
// engine/internal/queue), so this also checks that nothing of theirs reaches the version that
// serves.
func TestSaveDuringAReplaySupersedesIt(t *testing.T) {
	t.Parallel()
	const objects = 200
	ns := uniqueName("reload-replay")
	script := func(version int, stall bool) string {
		return watchScript(ns, fmt.Sprintf(`  indexers: { by: (cm) => {
    if (%t && cm.metadata.name === "c-020") {
      log.info("stalled", { version: %d });
      const until = Date.now() + 3000; // ended early by the interrupt of the superseded version
      while (Date.now() < until) {}
    }
    return [cm.data.color + "-%d"];
  } },
  onAdd(cm, ctx) {
    if (cm.metadata.name !== "probe") return;
    const counts = ["c0", "c1", "c2", "c3"].map((c) => ctx.cache.indexKeys("by", c + "-%d").length);
    log.info("probe", { version: %d, counts: counts.join(",") });
  },`, stall, version, version, version, version))
	}
	r := startEngine(t, map[string]string{"a.js": script(0, false)}, nil)
	r.namespace(t, ns)
	for i := range objects {
		r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("c-%03d", i), nil, map[string]any{"color": fmt.Sprintf("c%d", i%4)}))
	}
	v1, v2 := script(1, true), script(2, false)
	r.write(t, "a.js", v1)
	// Index functions have no trace record: the stall is known by what the script logs.
	r.log.waitFor(t, "version 1 stalled in its replay", 1, msg("stalled", "version", "1"))
	r.write(t, "a.js", v2)
	waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(v2))
	r.create(t, configmapsGVR, configmap(ns, "probe", nil, map[string]any{"color": "x"}))
	per := objects / 4
	r.calls.waitFor(t, "version 2 indexed every object", 1, call{Script: "a.js", Version: hashOf(v2), Object: ns + "/probe", Result: "ok",
		Logged: "probe", Attrs: map[string]string{"counts": fmt.Sprintf("%d,%d,%d,%d", per, per, per, per)}}.match)
	if served(r, "a.js", hashOf(v1)) {
		t.Fatalf("the superseded version served: %+v", r.engine.Status())
	}
	if got := r.calls.find(call{Script: "a.js", Version: hashOf(v1), Object: ns + "/probe"}.match); len(got) != 0 {
		t.Fatalf("the superseded version handled an event after the switch: %v", got)
	}
}
