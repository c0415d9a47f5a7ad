package engine_test

import (
	"testing"
)

// TestCollectsOnceAfterInitialSync checks the engine collects the initial lists' garbage
// once, when it is ready, and not again at a reload's swap for the same reason.
func TestCollectsOnceAfterInitialSync(t *testing.T) {
	t.Parallel()
	pre := startEngine(t, nil, nil)
	ns := pre.namespace(t, uniqueName("collect"))
	r := startEngine(t, map[string]string{"a.js": watchScript(ns, `  onAdd(cm, ctx) {},`)}, nil)
	r.log.waitFor(t, "collection after the initial sync", 1, msg("collected garbage after the initial sync"))
	r.write(t, "a.js", watchScript(ns, `  onAdd(cm, ctx) { log.info("v2"); },`))
	r.log.waitFor(t, "reload", 1, msg("script reloaded", "script", "a.js"))
	if got := r.log.find(msg("collected garbage after the initial sync")); len(got) != 1 {
		t.Fatalf("collections after the initial sync = %d, want 1\n%s", len(got), r.log.dump())
	}
}
