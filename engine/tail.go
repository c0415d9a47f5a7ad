package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
)

// TailFilter selects the records a Tail subscriber gets; empty fields match everything.
type TailFilter struct {
	Script   string
	Resource string // canonical spelling; Tail resolves what the caller gave
	Object   string // namespace/name
}

func (f TailFilter) matches(r TraceRecord) bool {
	return (f.Script == "" || f.Script == r.Script) &&
		(f.Resource == "" || f.Resource == r.Resource) &&
		(f.Object == "" || f.Object == r.Object)
}

// tailSub is one live subscriber. Records are offered without blocking the recording
// goroutine (a handler's worker): a subscriber that falls tailBuffer records behind misses the
// next ones, and is told how many.
type tailSub struct {
	filter TailFilter
	ch     chan TraceRecord
	missed atomic.Int64
}

func (s *tailSub) offer(r TraceRecord) {
	if !s.filter.matches(r) {
		return
	}
	select {
	case s.ch <- r:
	default:
		s.missed.Add(1)
	}
}

// ErrTraceOff is returned by Subscribe when the runner records no traces.
var ErrTraceOff = errors.New("trace recording is off (--trace-records 0)")

// Subscription receives the records recorded after Subscribe that its filter selects, in
// recording order. The owner reads Records and calls Close when done; it starts no goroutine.
type Subscription struct {
	sub *tailSub
	rec *recorder
}

// Subscribe starts a live subscription to the trace; f.Resource may be spelled as users do.
func (e *Engine) Subscribe(f TailFilter) (*Subscription, error) {
	r := e.trace
	if r == nil {
		return nil, ErrTraceOff
	}
	if f.Resource != "" {
		res, err := e.resolveForInspect(f.Resource)
		if err != nil {
			return nil, err
		}
		f.Resource = res.String()
	}
	if f.Script != "" && !slices.Contains(e.scriptNames(), f.Script) {
		return nil, fmt.Errorf("script %s: %w: no such script is loaded%s", f.Script, ErrNotFound, suggest(f.Script, e.scriptNames()))
	}
	s := &tailSub{filter: f, ch: make(chan TraceRecord, tailBuffer)}
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	return &Subscription{sub: s, rec: r}, nil
}

// Records delivers the records; it is never closed.
func (s *Subscription) Records() <-chan TraceRecord { return s.sub.ch }

// Missed is how many records were skipped so far because Records was not read fast enough
// (more than tailBuffer behind).
func (s *Subscription) Missed() int64 { return s.sub.missed.Load() }

// Close ends the subscription; idempotent.
func (s *Subscription) Close() {
	s.rec.mu.Lock()
	delete(s.rec.subs, s.sub)
	s.rec.mu.Unlock()
}
