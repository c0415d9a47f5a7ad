package reconcile_test

import (
	"sync/atomic"
	"testing"

	"github.com/jsinformer/jsinformer/engine/internal/reconcile"
	"github.com/jsinformer/jsinformer/scripting"
)

// A key held by a pause is asked about (Begin) only once the pause is over: when it moved to
// another replica meanwhile, it is dropped, not run.
func TestHoldComesBeforeBegin(t *testing.T) {
	t.Parallel()
	done := newRuns()
	run := func(key string, _ scripting.Event, _ <-chan struct{}) (scripting.ReconcileResult, error) {
		done.add(key)
		return scripting.ReconcileResult{}, nil
	}
	cfg := config(newFakes(t, 1, run), newLimiter(), nil)
	held, resume := make(chan struct{}), make(chan struct{})
	cfg.Hold = func() bool { close(held); <-resume; return true }
	var owned atomic.Bool
	owned.Store(true)
	cfg.Begin = func(string) (func(), bool) { return func() {}, owned.Load() }
	w := reconcile.New(cfg)
	defer w.Close()
	w.Enqueue("moving", "test")
	w.Start()
	recv(t, "the pause's hold", held)
	owned.Store(false) // the ring changed while the key was held
	close(resume)
	w.Shutdown()
	within(t, "Wait", w.Wait)
	if n := done.get("moving"); n != 0 {
		t.Errorf("the key was run %d times after it moved during the pause, want 0", n)
	}
}
