package schedule_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/engine/internal/schedule"
	"github.com/jsinformer/jsinformer/scripting"
)

// start is a Monday, 00:00:30 UTC: a cron entry "* * * * *" is first due 30s later.
var start = time.Date(2026, 1, 5, 0, 0, 30, 0, time.UTC)

// run is one due call: the entry and the virtual seconds since start.
type run struct{ entry, at int }

func (r run) String() string { return fmt.Sprintf("%d@%ds", r.entry, r.at) }

// harness drives a Loop on a fake clock; its "worker" starts the queued run of an entry at
// once when starts says so, and never otherwise.
type harness struct {
	clock  *clocktesting.FakeClock
	loop   *schedule.Loop
	mu     sync.Mutex
	runs   []run
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newHarness(t *testing.T, specs []scripting.ScheduleSpec, starts func(entry int) bool) *harness {
	h := &harness{clock: clocktesting.NewFakeClock(start)}
	h.loop = schedule.New(h.clock, specs, func(i int) {
		h.mu.Lock()
		h.runs = append(h.runs, run{i, int(h.clock.Since(start) / time.Second)})
		h.mu.Unlock()
		if starts(i) {
			h.loop.Started(i)
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	h.cancel = cancel
	h.wg.Go(func() { h.loop.Run(ctx) })
	t.Cleanup(h.stop)
	return h
}

// step moves the clock by d, then waits until the loop has set its timer again: whatever
// came due is queued by then. The fake clock fires a timer reset to 0 (the next entry due at
// the same time) only when it moves, so step then moves it by 0 once per entry, as a real
// clock would fire it at once.
func (h *harness) step(t *testing.T, d time.Duration, entries int) {
	t.Helper()
	for i := range entries + 1 {
		if i > 0 {
			d = 0
		}
		h.clock.Step(d)
		deadline := time.Now().Add(20 * time.Second)
		for !h.clock.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatal("the loop did not set its timer again within 20s")
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func (h *harness) got() []run {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.runs)
}

func (h *harness) stop() {
	h.cancel()
	h.wg.Wait()
}

// Each entry is due at its own times on the clock, one timer for all; an entry whose queued
// run has not started is not queued again, while the others go on.
func TestLoopCallsEachEntryWhenDue(t *testing.T) {
	t.Parallel()
	every := func(s int) scripting.ScheduleSpec {
		return scripting.ScheduleSpec{Every: time.Duration(s) * time.Second}
	}
	for _, tc := range []struct {
		name   string
		specs  []scripting.ScheduleSpec
		starts func(entry int) bool
		step   time.Duration
		steps  int
		want   []run
	}{
		{name: "one interval", specs: []scripting.ScheduleSpec{every(3)}, step: time.Second, steps: 10,
			want: []run{{0, 3}, {0, 6}, {0, 9}}},
		{name: "two intervals on one timer", specs: []scripting.ScheduleSpec{every(3), every(5)}, step: time.Second, steps: 15,
			want: []run{{0, 3}, {1, 5}, {0, 6}, {0, 9}, {1, 10}, {0, 12}, {0, 15}, {1, 15}}},
		{name: "cron beside an interval", specs: []scripting.ScheduleSpec{{Cron: "* * * * *"}, every(45)}, step: 15 * time.Second, steps: 12,
			want: []run{{0, 30}, {1, 45}, {0, 90}, {1, 90}, {1, 135}, {0, 150}, {1, 180}}},
		{name: "a step past several due times queues the entry once", specs: []scripting.ScheduleSpec{every(2)}, step: 7 * time.Second, steps: 2,
			want: []run{{0, 7}, {0, 14}}},
		{name: "a run not started is not queued twice", specs: []scripting.ScheduleSpec{every(2), every(3)},
			starts: func(entry int) bool { return entry != 0 }, step: time.Second, steps: 9,
			want: []run{{0, 2}, {1, 3}, {1, 6}, {1, 9}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			starts := tc.starts
			if starts == nil {
				starts = func(int) bool { return true }
			}
			h := newHarness(t, tc.specs, starts)
			for range tc.steps {
				h.step(t, tc.step, len(tc.specs))
			}
			if got := h.got(); !slices.Equal(got, tc.want) {
				t.Errorf("due calls %v, want %v", got, tc.want)
			}
		})
	}
}

// Once the entry's run started, it is queued again at its next due time.
func TestLoopQueuesAgainOnceStarted(t *testing.T) {
	t.Parallel()
	var started sync.WaitGroup
	h := newHarness(t, []scripting.ScheduleSpec{{Every: time.Second}}, func(int) bool { return false })
	for range 3 {
		h.step(t, time.Second, 1)
	}
	if got := len(h.got()); got != 1 {
		t.Fatalf("%d due calls before the run started, want 1", got)
	}
	started.Go(func() { h.loop.Started(0) }) // the worker, on its own goroutine
	started.Wait()
	h.step(t, time.Second, 1)
	if got, want := h.got(), []run{{0, 1}, {0, 4}}; !slices.Equal(got, want) {
		t.Errorf("due calls %v, want %v", got, want)
	}
}

// Retiring the version (its context done) ends Run and stops its timer; nothing is due after.
func TestLoopEndsWhenRetired(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []scripting.ScheduleSpec{{Every: time.Second}}, func(int) bool { return true })
	h.step(t, time.Second, 1)
	ended := make(chan struct{})
	go func() {
		h.stop()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20s of its context ending")
	}
	if h.clock.HasWaiters() {
		t.Error("the loop's timer is still set after Run returned")
	}
	h.clock.Step(time.Minute)
	if got, want := h.got(), []run{{0, 1}}; !slices.Equal(got, want) {
		t.Errorf("due calls %v, want %v", got, want)
	}
}
