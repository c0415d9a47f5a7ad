package engine

import (
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
)

// reconcileInspect is what a reconciler keeps for inspection: its keys (the queue view), the
// recording side of its workers, and the engine's pauses.
type reconcileInspect struct {
	book    *inspect.KeyBook
	workers []*trace.Worker // by worker; nil entries record nothing
	pauses  *inspect.Pauses
	halt    <-chan struct{} // the version's abort: a paused worker gives up waiting
	version string
}

// traceStart begins the record of one reconcile run of key on w; nil when recording is off.
func (r *reconciler) traceStart(w *trace.Worker, key string) *inspection.TraceRecord {
	if !w.Recording() {
		return nil
	}
	return w.Start(inspection.TraceRecord{
		Time: time.Now(), Script: r.name, Version: r.insp.version, Resource: r.cache.Resource, Object: key,
		Event: "reconcile", Attempt: r.queue.NumRequeues(key) + 1,
	})
}

func (r *reconciler) traceDone(w *trace.Worker, rec *inspection.TraceRecord, took time.Duration, err error) {
	if rec == nil {
		return
	}
	trace.Finish(rec, "reconcile", took, err)
	w.Done(rec)
}
