package memguard

import "time"

// heapTrend follows the live heap from one collection to the next, for the memory guard: a
// script that grows fast must be stopped earlier than actShare of the limit, since the guard
// decides only once per check (and a refresh's collection takes time too) while the script
// keeps growing. Owned by the guard's goroutine.
type heapTrend struct {
	cycles uint64        // the collection the last live figure came from
	live   int64         // that figure
	at     time.Time     // when the guard first saw it
	rate   float64       // bytes per second the live heap grew between the last two figures, ≥ 0
	took   time.Duration // how long the guard's last refresh collection took
}

// observe takes a reading: a live figure from a collection not seen before updates the rate.
func (t *heapTrend) observe(r Reading, now time.Time) {
	if !t.at.IsZero() && r.Cycles == t.cycles {
		return
	}
	if !t.at.IsZero() && now.After(t.at) {
		t.rate = max(0, float64(int64(r.Live)-t.live)/now.Sub(t.at).Seconds())
	}
	t.cycles, t.live, t.at = r.Cycles, int64(r.Live), now
}

// collected records how long a refresh collection took: the next decision comes that much
// later.
func (t *heapTrend) collected(took time.Duration) { t.took = took }

// threshold is the live heap from which the guard acts under limit: actShare of it, or lower
// by what the live heap would grow, at its last rate, until the guard's next decision (two
// check intervals, one for the check and one for the stop to land, and a refresh collection),
// but not below watchShare of it.
func (t *heapTrend) threshold(limit int64, interval time.Duration) int64 {
	at := int64(actShare * float64(limit))
	horizon := 2*interval + t.took
	reach := int64(t.rate * horizon.Seconds())
	return max(int64(watchShare*float64(limit)), min(at, limit-reach))
}
