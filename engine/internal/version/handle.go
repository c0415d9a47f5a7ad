package version

import (
	"time"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
)

// handle applies one event to the store and indexes, then calls the script. Runs on the
// version's worker only.
func (v *Version) handle(ev Event) {
	switch ev.Kind {
	case EventSynced:
		close(v.synced)
		return
	case EventDo:
		ev.Do()
		return
	case EventGained:
		v.replayGained(ev.Gained)
		return
	}
	if !v.waitUnpaused() {
		return // stopped while paused
	}
	switch ev.Kind {
	case EventAdd, EventUpdate:
		k := scriptcache.Key{Resource: ev.Sub.Cache.Resource, Object: ev.Key}
		v.store.Set(k, ev.Obj, ev.Values)
	case EventDelete:
		v.store.Remove(scriptcache.Key{Resource: ev.Sub.Cache.Resource, Object: ev.Key})
	case EventSchedule:
		v.callSchedule(ev.Due)
		return
	case EventCollect:
		v.collectMetrics(ev.Collect)
		return
	case EventDeliver:
		v.callDeliver(ev.Key)
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
func (v *Version) call(ev Event, rec *inspection.TraceRecord) {
	if !v.defines(ev.Kind) {
		return
	}
	key := v.OwnerKey(ev.Key, ev.Obj)
	end, ok := v.begin(key)
	if !ok {
		v.notOwned(key, rec)
		return
	}
	defer end()
	v.callHandler(ev, ev.Kind, rec, false)
}

// callHandler calls the handler of kind with ev's objects.
func (v *Version) callHandler(ev Event, kind Kind, rec *inspection.TraceRecord, dryRun bool) {
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
	case EventAdd:
		err = v.script.OnAdd(ev.Obj, ctx)
	case EventUpdate:
		err = v.script.OnUpdate(ev.Old, ev.Obj, ctx)
	case EventDelete:
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
var handlerNames = [...]string{EventAdd: "onAdd", EventUpdate: "onUpdate", EventDelete: "onDelete", EventSchedule: "schedule", EventCollect: "collect", EventDeliver: "outbox.deliver"}

func (v *Version) defines(kind Kind) bool {
	switch kind {
	case EventAdd:
		return v.def.OnAdd
	case EventUpdate:
		return v.def.OnUpdate
	case EventDelete:
		return v.def.OnDelete
	case EventSchedule:
		return len(v.def.Schedules) > 0
	case EventCollect:
		return v.scriptMetrics.Collected()
	case EventDeliver:
		return v.def.Outbox != nil && v.outboxCfg != nil
	}
	return false
}

// logFailure logs a script error with its position and JS stack.
func (v *Version) logFailure(handler, resource, key string, err error) {
	LogFailure(v.logger, handler, resource, key, err)
}
