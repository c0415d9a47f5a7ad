package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A memory-guard stop is immediate: the call running is interrupted, the events queued behind
// it are dropped and counted, and the version is done long before the running call's own
// deadline, having completed no call after the stop.
func TestMemoryStopInterruptsAndDropsTheQueue(t *testing.T) {
	t.Parallel()
	const queued = 50
	source := newFakeSource(3)
	e := loaderEngine(t, source) // handler timeout 2 s
	e.loadContent("a.js", cmScript("slow", `onUpdate() { const until = Date.now() + 1500; while (Date.now() < until) {} }`))
	v := pending(e, "a.js")
	e.syncUntil(t, v)
	listener := handlerFor(v.subs[0], v.intake)
	for n := range queued {
		listener.OnUpdate(stormObject(0, n), stormObject(0, n+1))
	}
	ok := e.stats.calls.WithLabelValues("a.js", "onUpdate", "ok")
	failed := e.stats.calls.WithLabelValues("a.js", "onUpdate", "error")
	eventually(t, func() error { // the first call is running, the others queued
		if v.queue.len() >= queued {
			return fmt.Errorf("no call started: %d queued", v.queue.len())
		}
		return nil
	})
	stopped := time.Now()
	e.onMemoryStop(memoryStop{v: v, bytes: 1 << 30})
	waitState(t, v, stateDone)
	took := time.Since(stopped)
	dropped := testutil.ToFloat64(e.stats.memoryDropped.WithLabelValues("a.js"))
	t.Logf("done %v after the stop; %v events dropped", took.Round(time.Millisecond), dropped)
	if took > time.Second {
		t.Errorf("the stopped version took %v to be done, want the running call interrupted at once", took)
	}
	if dropped < queued-2 {
		t.Errorf("%v events counted as dropped, want about the %d queued", dropped, queued)
	}
	if n := testutil.ToFloat64(ok); n != 0 {
		t.Errorf("%v calls completed after the stop, want none", n)
	}
	if n := testutil.ToFloat64(failed); n > 1 {
		t.Errorf("%v calls failed (interrupted): only the running one should have been", n)
	}
}
