package engine

import (
	"time"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
)

// handle applies one event to the store and indexes, then calls the script. Runs on the
// version's worker only.
func (v *version) handle(ev event) {
	switch ev.Kind {
	case eventSynced:
		close(v.synced)
		return
	case eventDo:
		ev.Do()
		return
	case eventGained:
		v.replayGained(ev.Gained)
		return
	}
	if !v.waitUnpaused() {
		return // stopped while paused
	}
	switch ev.Kind {
	case eventAdd, eventUpdate:
		k := scriptcache.Key{Resource: ev.Sub.Cache.Resource, Object: ev.Key}
		v.store.Set(k, ev.Obj, ev.Values)
	case eventDelete:
		v.store.Remove(scriptcache.Key{Resource: ev.Sub.Cache.Resource, Object: ev.Key})
	case eventSchedule:
		v.callSchedule(ev.Due)
		return
	case eventCollect:
		v.collectMetrics(ev.Collect)
		return
	}
	rec := v.traceStart(ev)
	v.call(ev, rec)
	if v.reconciler != nil {
		v.enqueueFor(ev, rec)
	}
	v.traceDone(rec)
}

// call runs the handler for ev, if the script defines one, and logs a failure; nothing a
// script does escapes as a panic. rec, when recording, gets what the call did.
func (v *version) call(ev event, rec *inspection.TraceRecord) {
	if !v.defines(ev.Kind) {
		return
	}
	end, ok := v.begin(ev.Key)
	if !ok {
		v.notOwned(ev.Key, rec)
		return
	}
	defer end()
	v.callHandler(ev, ev.Kind, rec, false)
}

// callHandler calls the handler of kind with ev's objects.
func (v *version) callHandler(ev event, kind eventKind, rec *inspection.TraceRecord, dryRun bool) {
	ctx := scripting.Event{
		Resource:          ev.Sub.Cache.Resource,
		IsInInitialList:   ev.Initial,
		FinalStateUnknown: ev.Unknown,
		Cache:             ev.Sub.Cache,
		Enqueue:           v.enqueue,
		Metrics:           v.metricSink(),
	}
	handler := handlerNames[kind]
	start := v.recorder().Call(handler, ev.Sub.Cache.Resource, ev.Key, rec, dryRun)
	var err error
	switch kind {
	case eventAdd:
		err = v.script.OnAdd(ev.Obj, ctx)
	case eventUpdate:
		err = v.script.OnUpdate(ev.Old, ev.Obj, ctx)
	case eventDelete:
		err = v.script.OnDelete(ev.Obj, ctx)
	}
	took := time.Since(start)
	v.recorder().Ended(handler, rec, took, err)
	v.metrics[kind].Observe(took, err)
	if err != nil {
		v.logFailure(handler, ev.Sub.Cache.Resource, ev.Key, err)
	}
}

// handlerNames are the JS names of the handlers, indexed by the event kind that calls them.
var handlerNames = [...]string{eventAdd: "onAdd", eventUpdate: "onUpdate", eventDelete: "onDelete", eventSchedule: "schedule", eventCollect: "collect"}

func (v *version) defines(kind eventKind) bool {
	switch kind {
	case eventAdd:
		return v.def.OnAdd
	case eventUpdate:
		return v.def.OnUpdate
	case eventDelete:
		return v.def.OnDelete
	case eventSchedule:
		return len(v.def.Schedules) > 0
	case eventCollect:
		return v.scriptMetrics.Collected()
	}
	return false
}

// logFailure logs a script error with its position and JS stack.
func (v *version) logFailure(handler, resource, key string, err error) {
	logScriptFailure(v.logger, handler, resource, key, err)
}
