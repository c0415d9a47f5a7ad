package trace

import (
	"sync/atomic"
)

// tailBuffer is how many records a slow subscriber may fall behind before it misses some.
const tailBuffer = 1024

// Filter selects the records a subscriber gets; empty fields match everything.
type Filter struct {
	Script   string
	Resource string // canonical spelling (the engine resolves what its caller gave)
	Object   string // namespace/name
}

func (f Filter) matches(r Record) bool {
	return (f.Script == "" || f.Script == r.Script) &&
		(f.Resource == "" || f.Resource == r.Resource) &&
		(f.Object == "" || f.Object == r.Object)
}

// tailSub is one live subscriber. Records are offered without blocking the recording
// goroutine (a handler's worker): a subscriber that falls tailBuffer records behind misses the
// next ones, and is told how many.
type tailSub struct {
	filter Filter
	ch     chan Record
	missed atomic.Int64
}

func (s *tailSub) offer(r Record) {
	if !s.filter.matches(r) {
		return
	}
	select {
	case s.ch <- r:
	default:
		s.missed.Add(1)
	}
}

// Subscription receives the records recorded after Subscribe that its filter selects, in
// recording order. The owner reads Records and calls Close when done; it starts no goroutine.
type Subscription struct {
	sub *tailSub
	rec *Recorder
}

// Subscribe starts a live subscription; r must not be nil.
func (r *Recorder) Subscribe(f Filter) *Subscription {
	s := &tailSub{filter: f, ch: make(chan Record, tailBuffer)}
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	return &Subscription{sub: s, rec: r}
}

// Records delivers the records; it is never closed.
func (s *Subscription) Records() <-chan Record { return s.sub.ch }

// Missed is how many records were skipped so far because Records was not read fast enough
// (more than tailBuffer behind).
func (s *Subscription) Missed() int64 { return s.sub.missed.Load() }

// Close ends the subscription; idempotent.
func (s *Subscription) Close() {
	s.rec.mu.Lock()
	delete(s.rec.subs, s.sub)
	s.rec.mu.Unlock()
}
