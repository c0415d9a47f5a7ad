// Package schedule is a script version's scheduler (Loop): it knows when each entry of the
// definition's `schedule` is due on the engine's clock and calls back "entry i is due". The
// engine's callback queues the run on the version's worker, so run(ctx) never runs beside
// another handler of the version; the worker calls Started(i) when the run begins.
//
// Contract:
//   - each entry's next due time is Spec.Next of the time its timer fired (of New's now for the
//     first), so the time a run waits on the worker never shifts the entry's due times; one timer on the Clock,
//     always set for the entry due first;
//   - an entry due again while its last run is still queued (due called, Started not yet) is
//     not queued twice: at most one queued run per entry;
//   - the timer is reset only after due returned, so a virtual clock that counts a fired,
//     unreset timer as pending (package offline) sees the run queued once none is pending.
//
// It plugs into package engine, which makes a Loop when a version becomes current (New sets
// the first timer on the loader's goroutine, so a driver moving a virtual clock sees it at
// once) and runs Run on one of the version's running goroutines (the group the version's
// close waits for), with a context done when the version is retired. Run is the only
// goroutine here; it reads the clock and calls due, nothing else, and stops its timer when it
// returns. Started is safe from any goroutine. It knows nothing of versions or scripts.
package schedule
