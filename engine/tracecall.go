package engine

import (
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/scripting"
)

// What a version keeps for inspection: the engine's recorder and pauses, the tap of its
// handler runtime, and the call its worker is running. The recorder and taps are package
// trace's; this file decides what a version records and when.
type versionInspect struct {
	trace    *trace.Recorder
	pauses   *inspect.Pauses
	tap      *trace.Tap                              // the worker's Script's; nil with recording off
	inflight atomic.Pointer[inspection.CallInFlight] // the worker's call, nil between calls
	subs     atomic.Pointer[[]*subscription]         // v.subs once subscribed, for readers off the loader
	held     atomic.Int32                            // 1 while the worker holds an event for a pause
	// scratch is the record the worker builds for the event it handles, reused from event to
	// event (the recorder copies it): recording allocates only what a call logged or wrote.
	scratch inspection.TraceRecord
}

// waitUnpaused holds the worker while the script is paused; false when the version stops.
// The event it holds counts in the queue view's backlog (held).
func (v *version) waitUnpaused() bool {
	if v.insp == nil || !v.insp.pauses.Paused(v.name) {
		return true
	}
	v.insp.held.Store(1)
	defer v.insp.held.Store(0)
	return v.insp.pauses.Wait(v.name, v.abort)
}

var eventNames = [...]string{eventAdd: "add", eventUpdate: "update", eventDelete: "delete", eventSchedule: "schedule", eventReplay: "replay"}

// traceStart begins the record of ev; nil when recording is off.
func (v *version) traceStart(ev event) *inspection.TraceRecord {
	if v.insp == nil || v.insp.trace == nil {
		return nil
	}
	rec := &v.insp.scratch
	*rec = inspection.TraceRecord{
		Time: time.Now(), Script: v.name, Version: v.hash, Resource: ev.sub.cache.Resource, Object: ev.key,
		Event: eventNames[ev.kind], Initial: ev.initial, FinalStateUnknown: ev.unknown, ResourceVersion: ev.resourceVersion(),
		Result: "not called",
	}
	return rec
}

// traceDone stores rec; nil-safe. rec is the worker's scratch record: the recorder keeps a
// copy, and the slices it holds now belong to that copy.
func (v *version) traceDone(rec *inspection.TraceRecord) {
	if rec != nil {
		v.insp.trace.Record(*rec)
		*rec = inspection.TraceRecord{}
	}
}

// callStarted marks the worker busy with handler on ev and opens the tap into rec.
func (v *version) callStarted(handler string, ev event, rec *inspection.TraceRecord, dryRun bool) time.Time {
	now := time.Now()
	if v.insp == nil {
		return now
	}
	v.insp.inflight.Store(&inspection.CallInFlight{Handler: handler, Resource: ev.sub.cache.Resource, Object: ev.key, Started: now})
	v.insp.tap.Open(rec, dryRun)
	return now
}

// callEnded closes the tap and fills rec with the call's outcome.
func (v *version) callEnded(handler string, rec *inspection.TraceRecord, took time.Duration, err error) {
	if v.insp == nil {
		return
	}
	v.insp.tap.Close()
	v.insp.inflight.Store(nil)
	trace.Finish(rec, handler, took, err)
}

// tapped returns opts whose logger and client feed a new tap, and the tap; with recording
// off it returns opts unchanged and a nil tap.
func (e *Engine) tapped(opts scripting.Options) (scripting.Options, *trace.Tap) {
	if e.trace == nil {
		return opts, nil
	}
	return trace.Tapped(opts, e.cfg.DryRun, k8sclient.WithForcedDryRun)
}

func resourceVersionOf(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}
