package engine_test

import (
	"strings"
	"testing"
	"time"

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
		v1 := watchScript(ns, `  onAdd(cm, ctx) {},`)
		r := startEngine(t, map[string]string{"a.js": v1}, func(c *engine.Config) { c.PaceGC = pace })
		r.write(t, "a.js", watchScript(ns, `  onAdd(cm, ctx) { log.info("v2"); },`))
		// v1 done: it drained, and the collector's look after the reload has returned.
		waitScript(t, r.engine, "a.js", "v1 drained after the reload", func(s engine.ScriptStatus) bool {
			old, ok := s.Version(hashOf(v1))
			return ok && old.State == engine.VersionDone
		})
		if pace {
			r.log.waitFor(t, "collection after the initial sync", 1, msg("collected garbage after the initial sync"))
		} else if stopped, err := r.stop(30 * time.Second); !stopped || err != nil {
			// Run has joined every goroutine the collector could run on.
			t.Fatalf("engine stopped %v, %v", stopped, err)
		}
		if got := r.log.find(msg("collected garbage after the initial sync")); len(got) != boolInt(pace) {
			t.Fatalf("PaceGC %v: collections after the initial sync = %d, want %d\n%s", pace, len(got), boolInt(pace), r.log.dump())
		}
		if !pace {
			if got := r.log.find(func(rec record) bool { return strings.HasPrefix(rec.msg, "collected garbage") }); len(got) > 0 {
				t.Fatalf("PaceGC off, yet %v", got)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
