package engine

import (
	"sync"
	"time"
)

// virtualSchedules stand in for the versions' schedulers (schedule.go) in an Offline engine:
// entries come due on the virtual clock, and Advance (not Settle: a periodic schedule is never
// done) queues them on their version's worker, as runSchedules does.
type virtualSchedules struct {
	mu      sync.Mutex
	entries []*virtualSchedule
}

type virtualSchedule struct {
	v    *version
	next []time.Time // by entry
}

// start registers v's schedule from now; called by the loader when v becomes current.
func (s *virtualSchedules) start(v *version, now time.Time) {
	vs := &virtualSchedule{v: v, next: make([]time.Time, len(v.def.Schedules))}
	for i, spec := range v.def.Schedules {
		vs.next[i] = spec.Next(now)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, vs)
}

// next is the earliest due time of a version still serving.
func (s *virtualSchedules) next() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first time.Time
	for _, vs := range s.live() {
		for _, t := range vs.next {
			if first.IsZero() || t.Before(first) {
				first = t
			}
		}
	}
	return first, !first.IsZero()
}

// fire queues every entry due at now and schedules its next run.
func (s *virtualSchedules) fire(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, vs := range s.live() {
		for i, t := range vs.next {
			if t.After(now) {
				continue
			}
			if vs.v.scheduled[i].CompareAndSwap(false, true) {
				vs.v.queue.push(event{kind: eventSchedule, due: i})
			}
			vs.next[i] = vs.v.def.Schedules[i].Next(now)
		}
	}
}

// live drops the versions retired since, and returns the others; called with mu held.
func (s *virtualSchedules) live() []*virtualSchedule {
	kept := s.entries[:0]
	for _, vs := range s.entries {
		select {
		case <-vs.v.retired:
		default:
			kept = append(kept, vs)
		}
	}
	s.entries = kept
	return kept
}

// startSchedules starts v's schedule on the engine's clock; called by the loader when v
// becomes current.
func (e *Engine) startSchedules(v *version) {
	if len(v.def.Schedules) == 0 || v.standby {
		return
	}
	if e.offline != nil {
		e.offline.schedules.start(v, e.offline.clock.Now())
		return
	}
	v.running.Go(v.runSchedules) // the worker runs, so the group cannot be at zero here
}
