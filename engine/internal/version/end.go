package version

import (
	"sync"
	"time"
)

// How a version ends: the loader retires it (Retire, then Drop for an immediate stop), a
// goroutine of the loader's waits for it (WaitIdle) and closes it (Close).

// SetState moves v to s and tells the state API. The loader's, but for StateDone, which the
// goroutine that closed v sets.
func (v *Version) SetState(s State) {
	v.state.Store(int32(s))
	switch {
	case v.book == nil:
	case s == StateDone:
		v.book.Done(v.name, v)
	default:
		v.book.Bump()
	}
}

// CurrentState is where v is in its life; safe from any goroutine.
func (v *Version) CurrentState() State { return State(v.state.Load()) }

// Retire stops v taking events; it reports false if v was retired already. With drain the
// worker first handles every event already queued (each bounded by the handler timeout);
// without, it takes no further event and the call running finishes (the engine interrupts
// it if it outlives the handler timeout). Called by the loader only.
func (v *Version) Retire(drain bool) bool {
	first := false
	v.retireOnce.Do(func() {
		first = true
		v.endRetired()
	})
	if !first {
		return false
	}
	v.unsubscribe()
	if v.reconciler != nil {
		v.reconciler.Shutdown()
	}
	if drain {
		v.intake.Close() // the indexer, if any, closes the worker's queue once drained
		return true
	}
	v.Halt()
	return true
}

// Drop stops v at once: every runtime is interrupted, the queued events and reconcile keys
// are skipped. It returns how many were. v must be retired (without drain) first.
func (v *Version) Drop() (events, keys int) {
	v.Halt()
	events = v.queue.Len()
	if v.intake != v.queue {
		events += v.intake.Len()
	}
	if v.reconciler != nil {
		keys = v.reconciler.Drop()
	}
	if v.admit != nil {
		v.admit.interrupt() // a memory stop fails the admission calls too: their failurePolicy answers
	}
	v.stop()
	return events, keys
}

// WaitIdle waits up to limit for v's goroutines to finish on their own: the worker and
// indexer done with their queues, the reconcile workers with their keys. It reports whether
// they did; if not, it interrupts them (they return once their calls do).
func (v *Version) WaitIdle(limit time.Duration) bool {
	if !v.workerStarted.Load() {
		return true
	}
	finished := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait() // returns once close has stopped whatever was still running
	wg.Go(func() {
		<-v.done
		if v.reconciler != nil {
			v.reconciler.Wait()
		}
		close(finished)
	})
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-finished:
		return true
	case <-timer.C:
		v.stop() // the waiting goroutine above ends once the interrupted calls return
		return false
	}
}

// Halt makes the worker and indexer take no further event (pop returns on abort, whatever is
// queued) and ends WaitSynced; idempotent, safe from any goroutine.
func (v *Version) Halt() {
	v.haltOnce.Do(func() { close(v.abort) })
	v.intake.Close()
	v.queue.Close()
}

// stop halts the version and interrupts its runtimes; idempotent, safe from any goroutine.
func (v *Version) stop() {
	v.Halt()
	v.script.Interrupt()
	for _, ix := range v.indexer.Runtimes() {
		ix.Interrupt()
	}
	if v.reconciler != nil {
		v.reconciler.Interrupt()
	}
}

// Close releases everything v holds, from any state: it lets the admission calls in flight
// finish (taking no new one), stops v (interrupting whatever else still runs), joins every goroutine v started (worker, indexer, scheduler, reconcile workers, the
// wait for its sync) and closes every runtime it was built with, whether its goroutine ever
// started or not. v must be unsubscribed already (Retire, or a failed Subscribe). Idempotent;
// it blocks for at most the runtimes' grace, so the loader leaves it to a goroutine of its own.
func (v *Version) Close() {
	v.closeOnce.Do(func() {
		if v.admit != nil {
			v.admit.close() // first: admission calls in flight finish, their requests answered
		}
		v.stop()
		v.running.Wait()
		v.helpers.Wait()
		if v.reconciler != nil {
			v.reconciler.Close()
		}
		v.script.Close() // idempotent: the worker, if it ran, closed it already
		for _, ix := range v.indexer.Runtimes() {
			ix.Close()
		}
		if v.onClose != nil {
			v.onClose()
		}
	})
}

// StartReconcile starts v's reconcile workers, if it has any; they do nothing once v is
// retired. The loader calls it once v's predecessors are finished.
func (v *Version) StartReconcile() {
	if v.reconciler != nil {
		v.reconciler.Start()
	}
}
