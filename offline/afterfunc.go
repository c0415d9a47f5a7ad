package offline

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/utils/clock"
)

// AfterFunc calls f when the harness moves the virtual clock to d after now or past it
// (fire), on the harness's goroutine: fetch's request timeouts and AbortSignal.timeout, and
// the late answers of `runner test`'s routes. Advance stops at each one's due time, as at a
// schedule's.
func (c *virtualClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &funcTimer{clock: c, f: f}
	t.Reset(d)
	return t
}

// funcTimer is an AfterFunc on the virtual clock; armed while it is in clock.funcs.
type funcTimer struct {
	clock *virtualClock
	f     func()
	// Guarded by clock.mu.
	due time.Time
	seq uint64
}

// dueFuncs takes the AfterFuncs due at now out of the armed set, in due then creation order.
func (c *virtualClock) dueFuncs(now time.Time) []*funcTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	var due []*funcTimer
	for t := range c.funcs {
		if !t.due.After(now) {
			due = append(due, t)
			delete(c.funcs, t)
		}
	}
	slices.SortFunc(due, func(a, b *funcTimer) int {
		return cmp.Or(a.due.Compare(b.due), cmp.Compare(a.seq, b.seq))
	})
	return due
}

// C is nil: an AfterFunc has no channel, as a time.Timer made by time.AfterFunc.
func (t *funcTimer) C() <-chan time.Time { return nil }

// Reset arms the timer again, d after the virtual now.
func (t *funcTimer) Reset(d time.Duration) bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	_, wasArmed := c.funcs[t]
	c.seq++
	t.due, t.seq = c.Now().Add(d), c.seq
	c.funcs[t] = struct{}{}
	return wasArmed
}

// Stop disarms the timer; it reports whether it was armed.
func (t *funcTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	_, wasArmed := c.funcs[t]
	delete(c.funcs, t)
	return wasArmed
}
