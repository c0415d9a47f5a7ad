package trace

import (
	"sync/atomic"

	"github.com/jsinformer/jsinformer/inspection"
)

// tailBuffer is how many records a slow subscriber may fall behind before it misses some.
const tailBuffer = 1024

// tailSub is one live subscriber. Records are offered without blocking the recording
// goroutine (a handler's worker): a subscriber that falls tailBuffer records behind misses the
// next ones, and is told how many.
type tailSub struct {
	filter inspection.TailFilter
	ch     chan inspection.TraceRecord
	missed atomic.Int64
}

func (s *tailSub) offer(r inspection.TraceRecord) {
	if !s.filter.Matches(r) {
		return
	}
	select {
	case s.ch <- r:
	default:
		s.missed.Add(1)
	}
}

// Subscription is the inspection.Subscription the Recorder hands out: it receives the records
// recorded after Subscribe that its filter selects, in recording order, and starts no
// goroutine.
type Subscription struct {
	sub *tailSub
	rec *Recorder
}

var _ inspection.Subscription = (*Subscription)(nil)

// Subscribe starts a live subscription (f.Resource in canonical spelling); r must not be nil.
func (r *Recorder) Subscribe(f inspection.TailFilter) *Subscription {
	s := &tailSub{filter: f, ch: make(chan inspection.TraceRecord, tailBuffer)}
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	return &Subscription{sub: s, rec: r}
}

// Records delivers the records; it is never closed.
func (s *Subscription) Records() <-chan inspection.TraceRecord { return s.sub.ch }

// Missed is how many records were skipped so far because Records was not read fast enough
// (more than tailBuffer behind).
func (s *Subscription) Missed() int64 { return s.sub.missed.Load() }

// Close ends the subscription; idempotent.
func (s *Subscription) Close() {
	s.rec.mu.Lock()
	delete(s.rec.subs, s.sub)
	s.rec.mu.Unlock()
}
