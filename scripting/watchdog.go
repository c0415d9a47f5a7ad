package scripting

import (
	"sync"
	"time"

	"github.com/dop251/goja"
)

// timeoutMark is the value a deadline interrupts the runtime with.
type timeoutMark struct{}

// watchdog enforces the per-call deadline and the final interrupt, and tells the Script's
// owner when a call is stuck: still running grace after its deadline, or grace after kill.
// One timer is reused for every call; the mutex makes arming, firing and killing atomic with
// respect to each other, so an interrupt meant for one call can never land in the next, and a
// killed runtime is never un-interrupted.
type watchdog struct {
	mu       sync.Mutex
	rt       *goja.Runtime
	timer    *time.Timer
	grace    time.Duration
	deadline time.Time // the call is interrupted then
	giveUp   time.Time // and declared stuck then, if it has not ended
	active   bool
	timedOut bool
	declared bool // the active call was declared stuck
	killed   bool
	// stuck receives false when the active call is stuck: the executor's done channel.
	stuck chan<- bool
}

func newWatchdog(rt *goja.Runtime, grace time.Duration, stuck chan<- bool) *watchdog {
	w := &watchdog{rt: rt, grace: grace, stuck: stuck}
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

// arm starts a call that must end within d; false when the script was killed.
func (w *watchdog) arm(d time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.killed {
		return false
	}
	w.deadline = time.Now().Add(d)
	w.giveUp = w.deadline.Add(w.grace)
	w.active, w.timedOut, w.declared = true, false, false
	w.rt.ClearInterrupt()
	w.timer.Reset(d)
	return true
}

func (w *watchdog) disarm() {
	w.mu.Lock()
	w.active = false
	w.timer.Stop()
	if !w.killed {
		w.rt.ClearInterrupt()
	}
	w.mu.Unlock()
}

// fire interrupts the current call once its deadline has passed and reports it stuck once
// giveUp has. A callback that fires early, or belongs to a call that has ended while the next
// one runs, re-arms for the current call instead, so a running call is always timed.
func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.active || w.declared {
		return
	}
	now := time.Now()
	if !w.timedOut && !w.killed {
		if now.Before(w.deadline) {
			w.timer.Reset(w.deadline.Sub(now))
			return
		}
		w.rt.Interrupt(timeoutMark{})
		w.timedOut = true
	}
	if now.Before(w.giveUp) {
		w.timer.Reset(w.giveUp.Sub(now))
		return
	}
	w.declared = true
	w.stuck <- false // at most once per call, and before the executor's true: never blocks
}

// kill interrupts the runtime for good; a call running now is stuck if it has not ended
// within grace.
func (w *watchdog) kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.killed {
		return
	}
	w.killed = true
	w.rt.Interrupt(ErrInterrupted)
	if !w.active || w.declared {
		w.timer.Stop()
		return
	}
	if limit := time.Now().Add(w.grace); limit.Before(w.giveUp) {
		w.giveUp = limit
	}
	w.timer.Reset(time.Until(w.giveUp))
}

// callDeadline is the current call's deadline; only the runtime's goroutine calls it, and only
// that goroutine writes the deadline.
func (w *watchdog) callDeadline() time.Time { return w.deadline }
