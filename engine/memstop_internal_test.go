package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/version"
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
	listener := handlerFor(v.ver.Subscriptions()[0])
	for n := range queued {
		listener.OnUpdate(stormObject(0, n), stormObject(0, n+1))
	}
	calls := func(result string) float64 {
		return series(t, e, "jsinformer_handler_calls_total", "script", "a.js", "handler", "onUpdate", "result", result)
	}
	eventually(t, func() error { // the first call is running, the others queued
		if v.ver.Backlog() >= queued {
			return fmt.Errorf("no call started: %d queued", v.ver.Backlog())
		}
		return nil
	})
	stopped := time.Now()
	e.onMemoryStop(memoryStop{v: v, bytes: 1 << 30})
	waitState(t, v, version.StateDone)
	took := time.Since(stopped)
	dropped := series(t, e, "jsinformer_memory_guard_dropped_total", "script", "a.js")
	t.Logf("done %v after the stop; %v events dropped", took.Round(time.Millisecond), dropped)
	if took > time.Second {
		t.Errorf("the stopped version took %v to be done, want the running call interrupted at once", took)
	}
	if dropped < queued-2 {
		t.Errorf("%v events counted as dropped, want about the %d queued", dropped, queued)
	}
	if n := calls("ok"); n != 0 {
		t.Errorf("%v calls completed after the stop, want none", n)
	}
	if n := calls("error"); n > 1 {
		t.Errorf("%v calls failed (interrupted): only the running one should have been", n)
	}
}

// hog keeps 30,000 small objects more on every update, as in issue 19.
const hog = `const kept = [];
export default { watch: { resource: "v1/configmaps", namespace: "ns" },
  onUpdate() { for (let i = 0; i < 30000; i++) kept.push({ i, s: "x" + i }); } };`

// The issue 19 scenario on the loader with a fake informer: a 400 MiB limit, the hog updated
// every 100 ms. The process's live heap never passes the limit (the limit is the whole
// process's, as --memory-limit is: the hog's memory and everything else); after the stop and
// a harmless replacement, it returns to within 40 MB of its level before the hog. Not
// parallel: it measures the process's live heap.
//
// The live heap is what a collection leaves live, and it is known only at the end of one: the
// test reads it every 10 ms from runtime/metrics (whichever collection ran last, the
// runtime's or the guard's), and once more from a collection of its own the moment the guard's
// verdict arrives, before the hog is stopped, when the hog holds the most it ever held (it
// only grows until stopped, so no collection in between could have seen more of it).
func TestMemoryGuardKeepsTheHogUnderTheLimit(t *testing.T) {
	const limit = 400 << 20
	source := newFakeSource(1)
	e := loaderEngine(t, source)
	e.cfg.MemoryLimit, e.cfg.MemoryCheckInterval = limit, 200*time.Millisecond
	e.cfg.HandlerTimeout = 30 * time.Second // a loaded machine makes each hog call take seconds
	e.logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	before := liveHeapAfterGC()
	e.loadContent("hog.js", hog)
	v := pending(e, "hog.js")
	e.syncUntil(t, v)
	listener := handlerFor(v.ver.Subscriptions()[0])

	stopSampling := make(chan struct{})
	peak := make(chan uint64, 1)
	go func() { peak <- samplePeakHeap(stopSampling) }()
	guardCtx, stopGuard := context.WithCancel(t.Context())
	joinGuard := e.startMemoryGuard(guardCtx)
	tick := time.NewTicker(100 * time.Millisecond)
	deadline := time.After(5 * time.Minute)
	var stop memoryStop
	var atVerdict uint64
	for n := 0; stop.v == nil; n++ {
		select {
		case stop = <-e.memoryStops:
			atVerdict = liveHeapAfterGC()
		case <-tick.C:
			listener.OnUpdate(stormObject(0, n), stormObject(0, n+1))
		case <-deadline:
			t.Fatal("the guard did not stop the hog within 5 minutes")
		}
	}
	tick.Stop()
	e.onMemoryStop(stop)
	waitState(t, v, version.StateDone)
	stopGuard()
	joinGuard()
	close(stopSampling)
	top := max(<-peak, atVerdict)

	e.loadContent("hog.js", cmScript("harmless", `onUpdate() {}`))
	e.syncUntil(t, pending(e, "hog.js"))
	var after uint64
	eventually(t, func() error {
		if after = liveHeapAfterGC(); after > before+40<<20 {
			return fmt.Errorf("live heap %d MB after the replacement loaded, %d MB before the hog", after>>20, before>>20)
		}
		return nil
	})
	t.Logf("live heap: %d MB before the hog, peak %d MB (%d MB at the guard's verdict) with a %d MB limit (stopped at %d MB measured), %d MB after the replacement",
		before>>20, top>>20, atVerdict>>20, limit>>20, stop.bytes>>20, after>>20)
	if top >= limit {
		t.Errorf("the live heap peaked at %d MB, passing the %d MB limit", top>>20, limit>>20)
	}
}

// testWriter writes log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// samplePeakHeap reads the live heap the last collection measured every 10 ms until stop, and
// returns the largest reading.
func samplePeakHeap(stop <-chan struct{}) uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var top uint64
	for {
		metrics.Read(sample)
		top = max(top, sample[0].Value.Uint64())
		select {
		case <-stop:
			return top
		case <-time.After(10 * time.Millisecond):
		}
	}
}
