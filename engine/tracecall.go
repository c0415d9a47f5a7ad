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

// What a version keeps for inspection: the recording side of its worker (package trace's
// Worker: the tap of its handler runtime, the call running, the record being built), the
// engine's pauses, and its subscriptions for readers off the loader. This file decides what a
// version's worker records and when.
type versionInspect struct {
	worker *trace.Worker
	pauses *inspect.Pauses
	subs   atomic.Pointer[[]*subscription] // v.subs once subscribed, for readers off the loader
	held   atomic.Int32                    // 1 while the worker holds an event for a pause
}

// recorder is the recording side of v's worker; nil (recording nothing) in unit tests.
func (v *version) recorder() *trace.Worker {
	if v.insp == nil {
		return nil
	}
	return v.insp.worker
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
	w := v.recorder()
	if !w.Recording() {
		return nil
	}
	return w.Start(inspection.TraceRecord{
		Time: time.Now(), Script: v.name, Version: v.hash, Resource: ev.Sub.Cache.Resource, Object: ev.Key,
		Event: eventNames[ev.Kind], Initial: ev.Initial, FinalStateUnknown: ev.Unknown, ResourceVersion: ev.ResourceVersion(),
	})
}

// traceDone stores rec; nil-safe.
func (v *version) traceDone(rec *inspection.TraceRecord) { v.recorder().Done(rec) }

// tapped returns opts whose logger and client feed a new tap, and the recording side of the
// Script made with them; with recording off, opts unchanged and a Worker that records
// nothing (it still shows the call in flight).
func (e *Engine) tapped(opts scripting.Options) (scripting.Options, *trace.Worker) {
	if e.trace == nil {
		return opts, trace.NewWorker(nil, nil)
	}
	opts, tap := trace.Tapped(opts, e.cfg.DryRun, k8sclient.WithForcedDryRun)
	return opts, trace.NewWorker(e.trace, tap)
}
