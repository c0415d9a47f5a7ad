package offline

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// virtualClock is the engine's clock in the harness (engine.Clock): the time is the test's
// FakeClock, which only the harness moves; timers (schedules) and delayed reconcile keys come
// due when the harness moves it and fires them, in order.
//
// A fired timer counts as pending until its owner resets or stops it: the engine's scheduler
// does that after it has queued the run the timer announced, so when no timer is pending every
// due run is queued where the harness sees it (the version's queue).
type virtualClock struct {
	*clocktesting.FakeClock

	mu     sync.Mutex
	queues []*queue
	timers map[*timer]struct{}
	funcs  map[*funcTimer]struct{} // AfterFunc's, armed
	seq    uint64                  // AfterFunc's creation order, for ties
}

func newVirtualClock(c *clocktesting.FakeClock) *virtualClock {
	return &virtualClock{FakeClock: c, timers: map[*timer]struct{}{}, funcs: map[*funcTimer]struct{}{}}
}

// NewQueue is a reconcile queue on the virtual clock.
func (c *virtualClock) NewQueue(string) workqueue.TypedRateLimitingInterface[string] {
	q := newQueue(c.FakeClock)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues = append(c.queues, q)
	return q
}

// NewTimer is a timer due d after the virtual now.
func (c *virtualClock) NewTimer(d time.Duration) clock.Timer {
	t := &timer{clock: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

func (c *virtualClock) allQueues() []*queue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*queue(nil), c.queues...)
}

// nextDelayed is the earliest due time of a delayed reconcile key.
func (c *virtualClock) nextDelayed() (time.Time, bool) {
	var first time.Time
	for _, q := range c.allQueues() {
		if t, ok := q.next(); ok && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first, !first.IsZero()
}

// nextTimer is the earliest due time of an armed timer or AfterFunc.
func (c *virtualClock) nextTimer() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for t := range c.timers {
		if t.armed && (first.IsZero() || t.due.Before(first)) {
			first = t.due
		}
	}
	for t := range c.funcs {
		if first.IsZero() || t.due.Before(first) {
			first = t.due
		}
	}
	return first, !first.IsZero()
}

// fire queues the delayed keys, fires the timers and calls the AfterFuncs due at the virtual
// now; the AfterFuncs in the order they were made, on the caller's goroutine, before it
// returns (fetch's timeouts release their request's hold there: see scripting.HoldRequest).
func (c *virtualClock) fire() {
	now := c.Now()
	for _, q := range c.allQueues() {
		q.fire(now)
	}
	for _, t := range c.dueFuncs(now) {
		t.f()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for t := range c.timers {
		if t.armed && !t.due.After(now) {
			t.armed, t.pending = false, true
			t.ch <- now // never blocks: a timer is armed only once its last value was taken (Reset)
		}
	}
}

// quiet reports that no key is queued or being reconciled and every fired timer was handled.
func (c *virtualClock) quiet() bool {
	for _, q := range c.allQueues() {
		if !q.quiet() {
			return false
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for t := range c.timers {
		if t.pending {
			return false
		}
	}
	return true
}

// workers sums the reconcile queues' workers (queue.workers).
func (c *virtualClock) workers() (busy int, pending bool) {
	for _, q := range c.allQueues() {
		b, p := q.workers()
		busy += b
		pending = pending || p
	}
	return busy, pending
}

// timersPending reports a fired timer its owner has not handled yet.
func (c *virtualClock) timersPending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for t := range c.timers {
		if t.pending {
			return true
		}
	}
	return false
}

// timer is a clock.Timer on the virtual clock.
type timer struct {
	clock *virtualClock
	ch    chan time.Time
	// Guarded by clock.mu.
	due            time.Time
	armed, pending bool
}

func (t *timer) C() <-chan time.Time { return t.ch }

// Reset arms the timer d after the virtual now; a value fired and not received is dropped,
// as a time.Timer's is since Go 1.23.
func (t *timer) Reset(d time.Duration) bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	wasArmed := t.armed
	select {
	case <-t.ch:
	default:
	}
	t.due, t.armed, t.pending = c.Now().Add(d), true, false
	c.timers[t] = struct{}{}
	return wasArmed
}

func (t *timer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	wasArmed := t.armed
	t.armed, t.pending = false, false
	delete(c.timers, t)
	return wasArmed
}
