package offline

import "sync/atomic"

// parkCount counts the calls parked on the virtual clock (scripting.Options.OnParked): each
// waits on nothing but fetch requests held until the harness moves the clock (a route that
// answers late or never), so only Advance, an abort or its deadline ends the wait. changes
// counts every change, so that a reader tells whether the count moved while it looked.
type parkCount struct {
	n, changes atomic.Int64
}

func (p *parkCount) add(delta int) {
	p.n.Add(int64(delta))
	p.changes.Add(1)
}

// stalled reports that nothing can happen until the virtual clock moves: some calls are
// parked, every busy worker (version workers, reconcile workers) is in one of them, no work is
// about to be taken by a waiting worker, and no fired schedule waits to be queued. Only
// upstream work could change that, and quiesce checks it first (the informers' barrier);
// the count is read around the rest, so a call that parked or woke meanwhile makes it false.
func (h *Harness) stalled() bool {
	changes, parked := h.parked.changes.Load(), h.parked.n.Load()
	if parked == 0 {
		return false
	}
	busy, pending := h.e.Workers()
	reconciling, queued := h.clock.workers()
	if pending || queued || h.clock.timersPending() {
		return false
	}
	return int64(busy+reconciling) == parked && h.parked.changes.Load() == changes
}
