package schedule

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// Clock is the time the loop runs on: the engine's clock, real or virtual.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) clock.Timer
}

// Spec is one entry's timing (a scripting.ScheduleSpec): when it is due next after t.
type Spec interface {
	Next(t time.Time) time.Time
}

// Loop is the scheduler of one script version: one timer on its Clock for the entry due
// first, and a flag per entry that keeps an entry queued once at most.
type Loop struct {
	clock  Clock
	specs  []Spec
	due    func(i int)
	queued []atomic.Bool // by entry: due was called and Started not yet
	next   []time.Time   // by entry: when it is due next; only Run's goroutine touches it
	first  int           // the entry the timer is set for
	timer  clock.Timer
}

// New returns the loop over specs, with its first timer set now on clk (so a driver that
// moves a virtual clock sees it as soon as New returns); due(i) queues a run of entry i.
// specs must not be empty. Run must be called once.
func New[S Spec](clk Clock, specs []S, due func(i int)) *Loop {
	l := &Loop{clock: clk, due: due, specs: make([]Spec, len(specs)),
		queued: make([]atomic.Bool, len(specs)), next: make([]time.Time, len(specs))}
	now := clk.Now()
	for i, s := range specs {
		l.specs[i] = s
		l.next[i] = s.Next(now)
	}
	l.first = earliest(l.next)
	l.timer = clk.NewTimer(l.next[l.first].Sub(now))
	return l
}

// Run calls due for each entry as it comes due, until ctx is done; it stops the timer when it
// returns. An entry due again while its last run is still queued (due called, Started not
// yet) is not queued twice.
func (l *Loop) Run(ctx context.Context) {
	defer l.timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case fired := <-l.timer.C():
			if l.queued[l.first].CompareAndSwap(false, true) {
				l.due(l.first)
			}
			l.next[l.first] = l.specs[l.first].Next(fired)
			l.first = earliest(l.next)
			// After due: a virtual clock counts the run as queued once its timer is reset.
			l.timer.Reset(l.next[l.first].Sub(l.clock.Now()))
		}
	}
}

// Started notes that entry i's queued run has started: its next due time queues it again.
// Safe from any goroutine.
func (l *Loop) Started(i int) { l.queued[i].Store(false) }

func earliest(ts []time.Time) int {
	first := 0
	for i, t := range ts {
		if t.Before(ts[first]) {
			first = i
		}
	}
	return first
}
