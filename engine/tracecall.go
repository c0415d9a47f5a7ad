package engine

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// What a version keeps for inspection: the engine's recorder and pauses, the tap of its
// handler runtime, and the call its worker is running.
type versionInspect struct {
	trace    *recorder
	pauses   *pauses
	tap      *callTap                        // the worker's Script's; nil with recording off
	inflight atomic.Pointer[CallInFlight]    // the worker's call, nil between calls
	subs     atomic.Pointer[[]*subscription] // v.subs once subscribed, for readers off the loader
	held     atomic.Int32                    // 1 while the worker holds an event for a pause
	// scratch is the record the worker builds for the event it handles, reused from event to
	// event (the recorder copies it): recording allocates only what a call logged or wrote.
	scratch TraceRecord
}

// waitUnpaused holds the worker while the script is paused; false when the version stops.
// The event it holds counts in the queue view's backlog (held).
func (v *version) waitUnpaused() bool {
	if v.insp == nil || !v.insp.pauses.paused(v.name) {
		return true
	}
	v.insp.held.Store(1)
	defer v.insp.held.Store(0)
	return v.insp.pauses.wait(v.name, v.abort)
}

// CallInFlight is a handler call running now.
type CallInFlight struct {
	Handler   string    `json:"handler"`
	Resource  string    `json:"resource,omitempty"`
	Object    string    `json:"object"`
	Started   time.Time `json:"started"`
	ElapsedMs float64   `json:"elapsedMs"`
}

var eventNames = [...]string{eventAdd: "add", eventUpdate: "update", eventDelete: "delete", eventSchedule: "schedule", eventReplay: "replay"}

// traceStart begins the record of ev; nil when recording is off.
func (v *version) traceStart(ev event) *TraceRecord {
	if v.insp == nil || v.insp.trace == nil {
		return nil
	}
	rec := &v.insp.scratch
	*rec = TraceRecord{
		Time: time.Now(), Script: v.name, Version: v.hash, Resource: ev.sub.cache.Resource, Object: ev.key,
		Event: eventNames[ev.kind], Initial: ev.initial, FinalStateUnknown: ev.unknown, ResourceVersion: ev.resourceVersion(),
		Result: "not called",
	}
	return rec
}

// traceDone stores rec; nil-safe. rec is the worker's scratch record: the recorder keeps a
// copy, and the slices it holds now belong to that copy.
func (v *version) traceDone(rec *TraceRecord) {
	if rec != nil {
		v.insp.trace.record(*rec)
		*rec = TraceRecord{}
	}
}

// callStarted marks the worker busy with handler on ev and opens the tap into rec.
func (v *version) callStarted(handler string, ev event, rec *TraceRecord, dryRun bool) time.Time {
	now := time.Now()
	if v.insp == nil {
		return now
	}
	v.insp.inflight.Store(&CallInFlight{Handler: handler, Resource: ev.sub.cache.Resource, Object: ev.key, Started: now})
	v.insp.tap.open(rec, dryRun)
	return now
}

// callEnded closes the tap and fills rec with the call's outcome.
func (v *version) callEnded(handler string, rec *TraceRecord, took time.Duration, err error) {
	if v.insp == nil {
		return
	}
	v.insp.tap.close()
	v.insp.inflight.Store(nil)
	fillOutcome(rec, handler, took, err)
}

// fillOutcome sets what a call did on rec; nil-safe.
func fillOutcome(rec *TraceRecord, handler string, took time.Duration, err error) {
	if rec == nil {
		return
	}
	rec.Handler, rec.DurationMs, rec.Result = handler, float64(took.Microseconds())/1000, "ok"
	switch {
	case errors.Is(err, scripting.ErrTimeout):
		rec.Result, rec.Error = "timeout", err.Error()
	case err != nil:
		rec.Result, rec.Error = "error", err.Error()
	}
}

func resourceVersionOf(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}
