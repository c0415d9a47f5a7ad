package engine_test

import (
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/engine"
)

// TestCollectsOnceAfterInitialSync checks the engine collects the initial lists' garbage
// once, when it is ready, and not again at a reload's swap for the same reason; and not at all
// when Config.PaceGC is off, as an embedder may want.
func TestCollectsOnceAfterInitialSync(t *testing.T) {
	t.Parallel()
	pre := startEngine(t, nil, nil)
	ns := pre.namespace(t, uniqueName("collect"))
	for _, pace := range []bool{true, false} {
		r := startEngine(t, map[string]string{"a.js": watchScript(ns, `  onAdd(cm, ctx) {},`)},
			func(c *engine.Config) { c.PaceGC = pace })
		r.write(t, "a.js", watchScript(ns, `  onAdd(cm, ctx) { log.info("v2"); },`))
		r.log.waitFor(t, "reload", 1, msg("script reloaded", "script", "a.js"))
		want := 0
		if pace {
			want = 1
			r.log.waitFor(t, "collection after the initial sync", 1, msg("collected garbage after the initial sync"))
		}
		if got := r.log.find(msg("collected garbage after the initial sync")); len(got) != want {
			t.Fatalf("PaceGC %v: collections after the initial sync = %d, want %d\n%s", pace, len(got), want, r.log.dump())
		}
		if !pace {
			if got := r.log.find(func(rec record) bool { return strings.HasPrefix(rec.msg, "collected garbage") }); len(got) > 0 {
				t.Fatalf("PaceGC off, yet %v", got)
			}
		}
	}
}
