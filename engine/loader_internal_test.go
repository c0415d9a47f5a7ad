package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/version"
)

// Unit tests of the loader's transitions on fakes (-short): each asserts on version states and
// informer references, never on log text.

func cmScript(tag, body string) string {
	return fmt.Sprintf(`// %s
export default { watch: { resource: "v1/configmaps", namespace: "ns" }, %s };`, tag, body)
}

func pending(e *Engine, name string) *loaded { return e.plugins[name].pending }
func current(e *Engine, name string) *loaded { return e.plugins[name].current }
func refs(s *fakeSource) (informers, total int) {
	for _, n := range s.Active() {
		informers++
		total += n
	}
	return informers, total
}

func TestRapidSavesEndWithTheLastOnly(t *testing.T) {
	t.Parallel()
	source := newFakeSource(20)
	e := loaderEngine(t, source)
	var versions []*loaded
	for i := range 3 {
		e.loadContent("a.js", cmScript(fmt.Sprint("v", i), `onAdd() {}`))
		versions = append(versions, pending(e, "a.js"))
	}
	e.syncUntil(t, versions[2])
	if current(e, "a.js") != versions[2] || pending(e, "a.js") != nil {
		t.Fatalf("current %v, pending %v: want the last save serving alone", current(e, "a.js"), pending(e, "a.js"))
	}
	for _, v := range versions[:2] {
		waitState(t, v, version.StateDone)
	}
	if n := versions[2].ver.Store().Size(); n != 20 {
		t.Errorf("the serving version holds %d objects, want 20", n)
	}
	if informers, total := refs(source); informers != 1 || total != 1 {
		t.Errorf("%d informers with %d references, want 1 and 1", informers, total)
	}
}

func TestUnloadDuringSync(t *testing.T) {
	t.Parallel()
	source := newFakeSource(5)
	source.block()
	defer source.unblock()
	e := loaderEngine(t, source)
	e.loadContent("a.js", cmScript("v1", `onAdd() {}`))
	v := pending(e, "a.js")
	if v.ver.CurrentState() != version.StateSyncing {
		t.Fatalf("state %s, want syncing", v.ver.CurrentState())
	}
	e.unload("a.js")
	waitState(t, v, version.StateDone)
	if _, ok := e.plugins["a.js"]; ok {
		t.Error("the plugin is still known after unload")
	}
	if informers, _ := refs(source); informers != 0 {
		t.Errorf("%d informers still running, want none", informers)
	}
}

// v1 drains slow reconciles while v2 and then v3 take over: v2, retired before its turn to
// reconcile, never reconciles and is done only after v1; v3 serves.
func TestReloadDuringDrain(t *testing.T) {
	t.Parallel()
	source := newFakeSource(3)
	e := loaderEngine(t, source)
	slow := `reconcile() { const until = Date.now() + 150; while (Date.now() < until) {} }`
	// v1's three reconciles must outlast v2's and v3's syncs, however loaded the machine: a
	// second each (under the handler timeout) is far longer than a sync of three objects.
	e.loadContent("a.js", cmScript("v1", strings.ReplaceAll(slow, "150", "1000")))
	v1 := pending(e, "a.js")
	e.syncUntil(t, v1)
	e.loadContent("a.js", cmScript("v2", slow))
	v2 := pending(e, "a.js")
	e.syncUntil(t, v2)
	if v1.ver.CurrentState() != version.StateDraining {
		t.Fatalf("v1 is %s right after v2 took over, want draining (its reconciles are slow)", v1.ver.CurrentState())
	}
	e.loadContent("a.js", cmScript("v3", slow))
	v3 := pending(e, "a.js")
	e.syncUntil(t, v3)
	if v3.ver.CurrentState() != version.StateCurrent || v2.ver.CurrentState() == version.StateCurrent {
		t.Fatalf("states v2 %s, v3 %s", v2.ver.CurrentState(), v3.ver.CurrentState())
	}
	waitState(t, v2, version.StateDone)
	if v1.ver.CurrentState() != version.StateDone {
		t.Errorf("v2 is done while v1 is %s: the chain is broken", v1.ver.CurrentState())
	}
	if got := v2.ver.ReconcileQueued(); got != 3 {
		t.Errorf("v2 has %d of its 3 keys left: it reconciled, though retired before its turn", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for v3.ver.ReconcileQueued() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // v3 reconciles once its predecessors are done
	}
	if n := v3.ver.ReconcileQueued(); n > 0 {
		t.Errorf("v3 still has %d keys queued: its reconcile never started", n)
	}
}

// The memory guard stops a version: its script stays stopped for that content, loads again
// for any other, and a stop while a newer version syncs hands the reconcile chain to it.
func TestMemoryStopTransitions(t *testing.T) {
	t.Parallel()
	source := newFakeSource(3)
	e := loaderEngine(t, source)
	leaky := cmScript("v1", `reconcile() {}`)
	e.loadContent("a.js", leaky)
	v1 := pending(e, "a.js")
	e.syncUntil(t, v1)

	e.onMemoryStop(memoryStop{v: v1, bytes: 1 << 30})
	waitState(t, v1, version.StateDone)
	if _, ok := e.plugins["a.js"]; ok {
		t.Fatal("the plugin is still known after its only version was stopped")
	}
	e.loadContent("a.js", leaky)
	if _, ok := e.plugins["a.js"]; ok {
		t.Fatal("the stopped content loaded again without a change")
	}
	e.loadContent("a.js", cmScript("v2", `reconcile() {}`))
	v2 := pending(e, "a.js")
	if v2 == nil || e.stopped["a.js"] != "" {
		t.Fatalf("a new content did not lift the stop: pending %v, stopped %q", v2, e.stopped["a.js"])
	}
	e.syncUntil(t, v2)

	source.block()
	unblock := sync.OnceFunc(source.unblock)
	defer unblock()
	e.loadContent("a.js", cmScript("v3", `reconcile() {}`))
	v3 := pending(e, "a.js")
	e.onMemoryStop(memoryStop{v: v2, bytes: 1 << 30})
	if current(e, "a.js") != nil || pending(e, "a.js") != v3 || e.plugins["a.js"].stopped != v2 {
		t.Fatalf("after stopping the serving version during a sync: current %v, pending %v", current(e, "a.js"), pending(e, "a.js"))
	}
	unblock()
	e.syncUntil(t, v3)
	if v3.after != (<-chan struct{})(v2.finished) {
		t.Error("the version that synced after the stop does not wait for the stopped one to finish")
	}
	if v3.ver.CurrentState() != version.StateCurrent {
		t.Errorf("v3 is %s, want current", v3.ver.CurrentState())
	}
}

// A verdict on a version replaced meanwhile (the guard measured it before a reload swapped it
// out) stops nothing: its successor keeps serving and nothing is marked stopped.
func TestMemoryStopOfAReplacedVersionDoesNothing(t *testing.T) {
	t.Parallel()
	source := newFakeSource(3)
	e := loaderEngine(t, source)
	e.loadContent("a.js", cmScript("v1", `onAdd() {}`))
	v1 := pending(e, "a.js")
	e.syncUntil(t, v1)
	e.loadContent("a.js", cmScript("v2", `onAdd() {}`))
	v2 := pending(e, "a.js")
	e.syncUntil(t, v2)
	e.onMemoryStop(memoryStop{v: v1, bytes: 1 << 30})
	if current(e, "a.js") != v2 || len(e.stopped) != 0 || v2.ver.CurrentState() != version.StateCurrent {
		t.Fatalf("a stale verdict changed the loader: current %v (want v2), stopped %v", current(e, "a.js"), e.stopped)
	}
}
