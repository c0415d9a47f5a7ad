package engine_test

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
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
		waitScript(t, r.engine, "a.js", "v1 drained after the reload", func(s status.ScriptStatus) bool {
			old, ok := s.Version(hashOf(v1))
			return ok && old.State == status.VersionDone
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

// TestReloadPutsTheGCPercentBack: a reload may lift the GC percent while it replays (so its
// allocation does not start a collection midway), and the percent is the user's again once
// the version it replaced has drained. A low percent makes every reload of this small cache
// need the lift. The percent is the process's: the test is not parallel, so it runs before
// the parallel tests (TestCollectsOnceAfterInitialSync paces collections too) start.
func TestReloadPutsTheGCPercentBack(t *testing.T) {
	const userPercent = 20
	defer debug.SetGCPercent(debug.SetGCPercent(userPercent))
	pre := startEngine(t, nil, nil)
	ns := pre.namespace(t, uniqueName("gclift"))
	for i := range 20 {
		pre.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("cm-%d", i), nil, map[string]any{"k": "v"}))
	}
	src := func(i int) string {
		return watchScript(ns, fmt.Sprintf(`  indexers: { byKey: (cm) => Object.keys(cm.data || {}) },
  onAdd(cm, ctx) { log.info("v%d"); },`, i))
	}
	r := startEngine(t, map[string]string{"a.js": src(1)}, func(c *engine.Config) { c.PaceGC = true })
	for i := 2; i <= 4; i++ { // the first reload measures a load, the next ones can lift
		r.write(t, "a.js", src(i))
		waitScript(t, r.engine, "a.js", fmt.Sprintf("v%d drained after the reload", i-1), func(s status.ScriptStatus) bool {
			old, ok := s.Version(hashOf(src(i - 1)))
			return ok && old.State == status.VersionDone
		})
		if got := gcPercent(); got != userPercent {
			t.Fatalf("GC percent after reload %d = %d, want the user's %d", i-1, got, userPercent)
		}
	}
}

func gcPercent() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
