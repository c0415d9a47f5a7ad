package reconcile

import (
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
)

// traceStart begins the record of one reconcile run of key on w; nil when recording is off.
func (r *Workers[R]) traceStart(w *trace.Worker, key string) *inspection.TraceRecord {
	if !w.Recording() {
		return nil
	}
	return w.Start(inspection.TraceRecord{
		Time: time.Now(), Script: r.cfg.Name, Version: r.cfg.Version, Resource: r.cfg.Cache.Resource, Object: key,
		Event: "reconcile", Attempt: r.cfg.Queue.NumRequeues(key) + 1,
	})
}

func (r *Workers[R]) traceDone(w *trace.Worker, rec *inspection.TraceRecord, took time.Duration, err error) {
	if rec == nil {
		return
	}
	trace.Finish(rec, "reconcile", took, err)
	w.Done(rec)
}
