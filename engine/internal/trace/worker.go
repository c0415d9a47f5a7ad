package trace

import (
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
)

// Worker is the recording side of one goroutine that owns one Script: a version's handler
// worker, or one of its reconcile workers. It holds the Tap of that Script, the call running
// now (the queue view's call in flight) and the record being built, reused from event to event
// (the Recorder keeps a copy): recording allocates only what a call logged or wrote.
//
// Its owner calls Start, Call, Ended and Done, in that order, for each event or run; InFlight
// is safe from any goroutine. A Worker with a nil Recorder records nothing but still shows
// the call in flight; a nil *Worker does neither.
type Worker struct {
	rec      *Recorder
	tap      *Tap
	inflight atomic.Pointer[inspection.CallInFlight]
	scratch  inspection.TraceRecord
}

// NewWorker returns the Worker of a Script tapped by tap (nil with recording off), recording
// into rec (nil: off).
func NewWorker(rec *Recorder, tap *Tap) *Worker { return &Worker{rec: rec, tap: tap} }

// Recording reports whether w keeps records (its Recorder is not nil): the owner need not
// build a record otherwise.
func (w *Worker) Recording() bool { return w != nil && w.rec != nil }

// Start begins r (Result "not called" until a call ends); it returns the record to fill, nil
// when not recording. The record is the Worker's own until Done.
func (w *Worker) Start(r inspection.TraceRecord) *inspection.TraceRecord {
	if !w.Recording() {
		return nil
	}
	w.scratch = r
	w.scratch.Result = "not called"
	return &w.scratch
}

// Done stores rec (nil-safe; rec need not be the Worker's own): the Recorder keeps a copy,
// which from now on owns the slices rec holds, and rec is cleared.
func (w *Worker) Done(rec *inspection.TraceRecord) {
	if rec == nil {
		return
	}
	if w != nil {
		w.rec.Record(*rec)
	}
	*rec = inspection.TraceRecord{}
}

// Call marks a call of handler on resource object starting, opens the tap into rec (dryRun:
// its writes go with dryRun=All), and returns when it started.
func (w *Worker) Call(handler, resource, object string, rec *inspection.TraceRecord, dryRun bool) time.Time {
	now := time.Now()
	if w == nil {
		return now
	}
	w.inflight.Store(&inspection.CallInFlight{Handler: handler, Resource: resource, Object: object, Started: now})
	w.tap.Open(rec, dryRun)
	return now
}

// Ended closes the tap, clears the call in flight and sets the call's outcome on rec.
func (w *Worker) Ended(handler string, rec *inspection.TraceRecord, took time.Duration, err error) {
	if w == nil {
		return
	}
	w.tap.Close()
	w.inflight.Store(nil)
	Finish(rec, handler, took, err)
}

// InFlight is the call running now, nil between calls. Safe from any goroutine.
func (w *Worker) InFlight() *inspection.CallInFlight {
	if w == nil {
		return nil
	}
	return w.inflight.Load()
}

// Tap is the Worker's tap: nil with recording off (its methods are nil-safe).
func (w *Worker) Tap() *Tap {
	if w == nil {
		return nil
	}
	return w.tap
}
