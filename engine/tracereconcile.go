package engine

import (
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
)

// reconcileInspect is what a reconciler keeps for inspection: its keys (the queue view), the
// taps of its workers' runtimes, and the engine's recorder and pauses.
type reconcileInspect struct {
	book    *inspect.KeyBook
	taps    []*trace.Tap // by worker; nil entries with recording off
	trace   *trace.Recorder
	pauses  *inspect.Pauses
	halt    <-chan struct{} // the version's abort: a paused worker gives up waiting
	version string
}

// traceStart begins the record of one reconcile run of key; nil when recording is off.
func (r *reconciler) traceStart(key string) *inspection.TraceRecord {
	if r.insp.trace == nil {
		return nil
	}
	return &inspection.TraceRecord{
		Time: time.Now(), Script: r.name, Version: r.insp.version, Resource: r.cache.Resource, Object: key,
		Event: "reconcile", Attempt: r.queue.NumRequeues(key) + 1,
	}
}

func (r *reconciler) traceDone(rec *inspection.TraceRecord, took time.Duration, err error) {
	if rec == nil {
		return
	}
	trace.Finish(rec, "reconcile", took, err)
	r.insp.trace.Record(*rec)
}

// enqueueBecause queues key for reconcile because of ev (how: event, owner, watch.enqueue)
// and notes it in rec. Runs on the worker.
func (v *version) enqueueBecause(key string, rec *inspection.TraceRecord, how string, ev event) {
	if v.enqueueOnly != nil && !v.enqueueOnly(key) {
		return // replaying gained keys: the others were enqueued when they were this replica's
	}
	var reason string
	switch how {
	case "event":
		reason = eventNames[ev.kind] + " of " + ev.sub.cache.Resource + " " + ev.key
	default:
		reason = how + " of " + ev.sub.cache.Resource + " " + ev.key
	}
	if rec != nil {
		rec.Enqueued = append(rec.Enqueued, key)
	}
	v.reconciler.enqueue(key, reason)
}

// ctxEnqueue is ctx.enqueue of the version's handlers and schedules: the reason names the
// call running on the worker.
func (v *version) ctxEnqueue(key string) {
	reason := "ctx.enqueue"
	if v.insp != nil {
		if c := v.insp.inflight.Load(); c != nil {
			reason += " in " + c.Handler + " of " + c.Object
		}
		v.insp.tap.AddEnqueued(key)
	}
	v.reconciler.enqueue(key, reason)
}
