package engine

import (
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/version"
)

// A schedule runs on the worker once the version serves, and stops with it.
func TestScheduleRunsWhileCurrentOnly(t *testing.T) {
	t.Parallel()
	e := loaderEngine(t, newFakeSource(3))
	e.loadContent("s.js", cmScript("v1", `schedule: [{ every: "1s", run(ctx) {
    if (ctx.cache.list().length !== 3) throw new Error("the cache is not complete");
  } }]`))
	v := pending(e, "s.js")
	e.syncUntil(t, v)
	calls := func(result string) float64 {
		return series(t, e, "jsinformer_handler_calls_total", "script", "s.js", "handler", "schedule", "result", result)
	}
	deadline := time.Now().Add(10 * time.Second)
	for calls("ok") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("schedule ran %v times ok, %v failed in 10s; want 2 ok", calls("ok"), calls("error"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.unload("s.js")
	waitState(t, v, version.StateDone) // done: the scheduler, one of the version's goroutines, returned
}
