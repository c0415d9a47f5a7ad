package engine

import (
	"context"
	"errors"
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

// ErrTraceOff is returned by Tail when the runner records no traces.
var ErrTraceOff = errors.New("trace recording is off (--trace-records 0)")

// Tail calls send for every record recorded from now on that f selects, in recording order,
// on the calling goroutine, until ctx is done or send fails; missed is the number of records
// skipped because send was too slow, so far. It returns send's error, or nil when ctx ends.
func (e *Engine) Tail(ctx context.Context, f TailFilter, send func(r TraceRecord, missed int64) error) error {
	r := e.trace
	if r == nil {
		return ErrTraceOff
	}
	if f.Resource != "" {
		res, err := e.resolver.Resolve(f.Resource)
		if err != nil {
			return err
		}
		f.Resource = res.String()
	}
	s := &tailSub{filter: f, ch: make(chan TraceRecord, tailBuffer)}
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.subs, s)
		r.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case rec := <-s.ch:
			if err := send(rec, s.missed.Load()); err != nil {
				return err
			}
		}
	}
}
