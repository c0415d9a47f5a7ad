package scripting

import (
	"sync"
	"time"

	"github.com/dop251/goja"
)

// timeoutMark is the value a deadline interrupts the runtime with.
type timeoutMark struct{}

// watchdog enforces the per-call deadline and the final interrupt. One timer is reused for
// every call; the mutex makes arming, firing and killing atomic with respect to each other,
// so an interrupt meant for one call can never land in the next, and a killed runtime is
// never un-interrupted.
type watchdog struct {
	mu       sync.Mutex
	rt       *goja.Runtime
	timer    *time.Timer
	deadline time.Time
	active   bool
	killed   bool
}

func newWatchdog(rt *goja.Runtime) *watchdog {
	w := &watchdog{rt: rt}
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
	w.active = true
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

// fire interrupts the current call if its deadline has passed. A callback that fires early,
// or belongs to a call that has ended while the next one runs, re-arms for the current
// deadline instead, so a running call is always either interrupted or still timed.
func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.active || w.killed {
		return
	}
	if left := time.Until(w.deadline); left > 0 {
		w.timer.Reset(left)
		return
	}
	w.rt.Interrupt(timeoutMark{})
}

func (w *watchdog) kill() {
	w.mu.Lock()
	w.killed = true
	w.timer.Stop()
	w.rt.Interrupt(ErrInterrupted)
	w.mu.Unlock()
}

// callDeadline is the current call's deadline; only the runtime's goroutine calls it, and only
// that goroutine writes the deadline.
func (w *watchdog) callDeadline() time.Time { return w.deadline }
