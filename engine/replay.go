package engine

import (
	"fmt"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// Replay: the debug API asks a script's serving version to call its handler again with the
// object its cache holds. Package engine/internal/inspect queues the call on the worker
// (Live.Do), so it runs after the events already queued, like any call.

// Replay runs on the worker: onAdd with the cached object, or onUpdate(obj, obj) for a script
// that has no onAdd (inspect.Live).
func (v *version) Replay(w inspect.Watch, key string, dryRun bool) (inspection.TraceRecord, error) {
	var sub *subscription
	for _, s := range v.subscriptions() {
		if s.Cache.Resource == w.Resource.String() {
			sub = s
			break
		}
	}
	kind := eventAdd
	if !v.def.OnAdd {
		kind = eventUpdate
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
	case !v.handles(key):
		return inspection.TraceRecord{}, fmt.Errorf("replay %s: %w: %s belongs to replica %s of the shard ring; replay it there", v.name, inspection.ErrInvalid, key, v.shard.Owner(key))
	}
	ev := event{Kind: eventReplay, Sub: sub, Key: key, Obj: obj, Old: obj}
	rec := &inspection.TraceRecord{Script: v.name, Version: v.hash, Resource: sub.Cache.Resource, Object: key,
		Event: "replay", ResourceVersion: resourceVersionOf(obj)}
	if started := v.traceStart(ev); started != nil {
		rec = started
	}
	v.callHandler(ev, kind, rec, dryRun)
	out := *rec
	v.traceDone(rec)
	return out, nil
}
