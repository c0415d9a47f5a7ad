package reconcile_test

import (
	"testing"

	"github.com/jsinformer/jsinformer/engine/internal/reconcile"
	"github.com/jsinformer/jsinformer/scripting"
)

// Close releases every runtime the Workers were made with, from any state: never started (a
// version retired before its turn), idle, in a run (interrupted), shut down or dropped first.
func TestCloseReleasesEveryRuntime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		start  bool
		run    bool // a run is in progress, stuck until interrupted
		before func(w *reconcile.Workers[*fakeRuntime])
	}{
		{name: "never started"},
		// A version retired before its turn to reconcile never reconciles, not even its queued keys.
		{name: "shut down before its start", before: func(w *reconcile.Workers[*fakeRuntime]) { w.Shutdown(); w.Start() }},
		{name: "started, idle", start: true},
		{name: "in a run", start: true, run: true},
		{name: "dropped in a run", start: true, run: true, before: func(w *reconcile.Workers[*fakeRuntime]) {
			if left := w.Drop(); left != 1 {
				t.Errorf("Drop skipped %d keys, want 1", left)
			}
		}},
		{name: "shut down in a run", start: true, run: true, before: func(w *reconcile.Workers[*fakeRuntime]) { w.Shutdown() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			running := make(chan struct{}, 1)
			run := func(key string, _ scripting.Event, interrupted <-chan struct{}) (scripting.ReconcileResult, error) {
				if key == "stuck" {
					running <- struct{}{}
					<-interrupted // a busy loop only Interrupt ends
					return scripting.ReconcileResult{}, errInterrupted
				}
				return scripting.ReconcileResult{}, nil
			}
			rts := newFakes(t, 3, run)
			w := reconcile.New(config(rts, newLimiter(), nil))
			if tc.start {
				w.Start()
			} else {
				w.Enqueue("waiting", "test")
			}
			if tc.run {
				w.Enqueue("stuck", "test")
				recv(t, "the run to start", running)
				w.Enqueue("later", "test") // queued behind: a dropped queue never runs it
			}
			if tc.before != nil {
				tc.before(w)
			}
			within(t, "Close", w.Close)
			for i, rt := range rts {
				if !rt.closed.Load() {
					t.Errorf("runtime %d not closed", i)
				}
			}
			calls := 0
			for _, rt := range rts {
				calls += int(rt.calls.Load())
			}
			switch {
			case !tc.start && calls > 0:
				t.Errorf("%d reconcile calls, though the workers never started", calls)
			case tc.name == "dropped in a run" && calls != 1:
				t.Errorf("%d reconcile calls, want 1: the key queued behind the dropped run was not skipped", calls)
			}
			w.Enqueue("after", "test") // after Close nothing runs: the fakes fail the test if called
			within(t, "a second Close", w.Close)
		})
	}
}
