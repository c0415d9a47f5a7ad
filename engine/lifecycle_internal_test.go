package engine

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// lifecycleScript is version tag of a script with every kind of runtime a version can own: the
// worker's, the index stage's and four reconcile workers'.
func lifecycleScript(tag string, reconcileMillis int) string {
	return cmScript(tag, fmt.Sprintf(`concurrency: 4,
  indexers: { byName: (cm) => [cm.metadata.name] },
  onAdd() {},
  reconcile() { const until = Date.now() + %d; while (Date.now() < until) {} }`, reconcileMillis))
}

// runtimesPerVersion is what lifecycleScript instantiates: worker, two index runtimes, 4
// reconcilers.
const runtimesPerVersion = 7

// lifecycleStep drives one way a version ends, once; rep numbers the repetitions so each
// save has a new content.
type lifecycleStep func(t *testing.T, e *Engine, source *fakeSource, rep int)

// Every way a version ends releases everything it holds: after each transition has been driven
// many times, the process runs exactly the runtimes of the versions still alive, and once the
// engine has stopped, no goroutine of the engine is left. Not parallel: it counts the
// process's runtimes and goroutines.
func TestEveryVersionEndReleasesEverything(t *testing.T) {
	const reps = 12
	cases := []struct {
		name string
		step lifecycleStep
	}{
		{"superseded while pending", func(t *testing.T, e *Engine, source *fakeSource, rep int) {
			source.block()
			e.loadContent("a.js", lifecycleScript(fmt.Sprint("p", rep), 1))
			e.loadContent("a.js", lifecycleScript(fmt.Sprint("q", rep), 1)) // supersedes the first
			source.unblock()
			e.syncUntil(t, pending(e, "a.js"))
		}},
		{"unloaded while pending", func(t *testing.T, e *Engine, source *fakeSource, rep int) {
			source.block()
			defer source.unblock()
			e.loadContent("b.js", lifecycleScript(fmt.Sprint("u", rep), 1))
			e.unload("b.js")
		}},
		{"retired before its predecessor drained", func(t *testing.T, e *Engine, _ *fakeSource, rep int) {
			for k := range 3 { // the second is retired while the first still reconciles
				e.loadContent("a.js", lifecycleScript(fmt.Sprint("d", rep, k), 100))
				e.syncUntil(t, pending(e, "a.js"))
			}
		}},
		{"retired after its predecessor drained", func(t *testing.T, e *Engine, _ *fakeSource, rep int) {
			e.loadContent("a.js", lifecycleScript(fmt.Sprint("r", rep), 1))
			v := pending(e, "a.js")
			e.syncUntil(t, v)
			waitChainDone(t, v)
		}},
		{"stopped by the memory guard", func(t *testing.T, e *Engine, _ *fakeSource, rep int) {
			e.loadContent("a.js", lifecycleScript(fmt.Sprint("m", rep), 1))
			v := pending(e, "a.js")
			e.syncUntil(t, v)
			e.onMemoryStop(memoryStop{v: v, bytes: 1 << 30})
		}},
		{"file or its folder removed", func(t *testing.T, e *Engine, _ *fakeSource, rep int) {
			e.loadContent("a.js", lifecycleScript(fmt.Sprint("f", rep), 1))
			e.syncUntil(t, pending(e, "a.js"))
			e.onPluginEvent(plugins.Event{Kind: plugins.Removed, Source: plugins.Source{Name: "a.js"}})
		}},
		{"runner stopped", func(t *testing.T, e *Engine, source *fakeSource, rep int) {
			e.loadContent("a.js", lifecycleScript(fmt.Sprint("s", rep), 1))
			e.syncUntil(t, pending(e, "a.js"))
			source.block()
			defer source.unblock()
			e.loadContent("b.js", lifecycleScript(fmt.Sprint("t", rep), 1)) // pending at the stop
			e.shutdown()
			e.plugins = map[string]*plugin{}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			base := scripting.LiveRuntimes()
			source := newFakeSource(3)
			e := loaderEngine(t, source)
			for rep := range reps {
				c.step(t, e, source, rep)
			}
			want := base + runtimesPerVersion*int64(liveVersions(e))
			eventually(t, func() error {
				if got := scripting.LiveRuntimes(); got != want {
					return fmt.Errorf("%d runtimes live after %d× %s, want %d (the live versions')", got, reps, c.name, want)
				}
				return nil
			})
			e.shutdown()
			e.plugins = map[string]*plugin{} // stopped: the clean-up's shutdown has nothing left
			source.Shutdown()
			if got := scripting.LiveRuntimes(); got != base {
				t.Errorf("%d runtimes live after the engine stopped, want %d", got, base)
			}
			if err := goleak.Find(ignore); err != nil {
				t.Errorf("goroutines left after the engine stopped: %v", err)
			}
		})
	}
}

// liveVersions counts the versions serving or syncing.
func liveVersions(e *Engine) int {
	n := 0
	for _, p := range e.plugins {
		if p.current != nil {
			n++
		}
		if p.pending != nil {
			n++
		}
	}
	return n
}

// waitChainDone waits until v's predecessors are done, so its reconcile has started.
func waitChainDone(t *testing.T, v *loaded) {
	t.Helper()
	if v.after == nil {
		return
	}
	select {
	case <-v.after:
	case <-time.After(10 * time.Second):
		t.Fatalf("the predecessor of %s is not done after 10s", v.ver.Hash())
	}
}

// eventually polls check until it returns nil, for up to 20s.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
