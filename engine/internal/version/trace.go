package version

import (
	"fmt"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// What a version's worker records and when (Inspect keeps it), and the debug API's replay:
// package engine/internal/inspect queues the call on the worker (Do), so it runs after the
// events already queued, like any call.

// recorder is the recording side of v's worker; nil (recording nothing) in unit tests.
func (v *Version) recorder() *trace.Worker { return v.insp.Recorder() }

// waitUnpaused holds the worker while the script is paused; false when the version stops.
func (v *Version) waitUnpaused() bool { return v.insp.WaitUnpaused(v.name, v.abort) }

// traceStart begins the record of ev; nil when recording is off.
func (v *Version) traceStart(ev Event) *inspection.TraceRecord {
	return v.insp.TraceStart(v.name, v.hash, ev)
}

// traceDone stores rec; nil-safe.
func (v *Version) traceDone(rec *inspection.TraceRecord) { v.recorder().Done(rec) }

// Replay runs on the worker: onAdd with the cached object, or onUpdate(obj, obj) for a script
// that has no onAdd (inspect.Live).
func (v *Version) Replay(w inspect.Watch, key string, dryRun bool) (inspection.TraceRecord, error) {
	var sub *Subscription
	for _, s := range v.Subscriptions() {
		if s.Cache.Resource == w.Resource.String() {
			sub = s
			break
		}
	}
	kind := EventAdd
	if !v.def.OnAdd {
		kind = EventUpdate
	}
	var obj scripting.Object // nil: not cached (or w is not v's: the asker checked it is)
	if sub != nil {
		obj = v.store.Get(sub.Cache.Resource, key)
	}
	switch {
	case !v.def.OnAdd && !v.def.OnUpdate:
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: the script has neither onAdd nor onUpdate", v.name)
	case obj == nil:
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: %w: %s %s is not in the script's cache", v.name, inspection.ErrNotFound, w.Resource, key)
	case v.standby || !v.lead.Valid():
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: this runner is not the leader: it calls no handler", v.name)
	case !v.handles(v.OwnerKey(key, obj)):
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: %w: %s belongs to replica %s of the shard ring; replay it there", v.name, inspection.ErrInvalid, key, v.shard.Owner(v.OwnerKey(key, obj)))
	}
	ev := Event{Kind: EventReplay, Sub: sub, Key: key, Obj: obj, Old: obj}
	rec := &inspection.TraceRecord{Script: v.name, Version: v.hash, Resource: sub.Cache.Resource, Object: key,
		Event: "replay", ResourceVersion: ResourceVersionOf(obj)}
	if started := v.traceStart(ev); started != nil {
		rec = started
	}
	v.callHandler(ev, kind, rec, dryRun)
	out := *rec
	v.traceDone(rec)
	return out, nil
}
