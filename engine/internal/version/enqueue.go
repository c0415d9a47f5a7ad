package version

import (
	"fmt"
	"strings"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/shardrange"
)

// enqueueFor enqueues for reconcile what ev's watch entry says: the object's own key, its
// controller owner's key, nothing, or the keys the script's function names. Runs on the worker.
// rec, when recording, gets the keys.
func (v *Version) enqueueFor(ev Event, rec *inspection.TraceRecord) {
	switch ev.Sub.Target.Enqueue {
	case scripting.EnqueueSelf:
		v.enqueueBecause(ev.Key, rec, "event", ev)
	case scripting.EnqueueOwner:
		if key, ok := ControllerKey(ev.Obj, v.ownerNamespaced); ok {
			v.enqueueBecause(key, rec, "owner", ev)
		}
	case scripting.EnqueueFunc:
		v.enqueueMapped(ev, rec)
	}
}

// enqueueMapped asks the script's watch[i].enqueue function for keys; a deleted object whose
// last state is unknown enqueues nothing.
func (v *Version) enqueueMapped(ev Event, rec *inspection.TraceRecord) {
	if ev.Obj == nil || v.standby || !v.lead.Valid() {
		return
	}
	keys, err := v.script.EnqueueKeys(ev.Sub.Target.Watch, ev.Obj)
	if err != nil {
		v.logFailure("watch.enqueue", ev.Sub.Cache.Resource, ev.Key, err)
		return
	}
	for _, k := range keys {
		v.enqueueBecause(k, rec, "watch.enqueue", ev)
	}
}

// enqueueBecause queues key for reconcile because of ev (how: event, owner, watch.enqueue)
// and notes it in rec. Runs on the worker.
func (v *Version) enqueueBecause(key string, rec *inspection.TraceRecord, how string, ev Event) {
	if v.enqueueOnly != nil && !v.enqueueOnly(key) {
		return // replaying gained keys: the others were enqueued when they were this replica's
	}
	if err := v.outsidePartition(key); err != nil {
		v.logFailure(how, ev.Sub.Cache.Resource, ev.Key, err)
		return
	}
	var reason string
	switch how {
	case "event":
		reason = EventNames[ev.Kind] + " of " + ev.Sub.Cache.Resource + " " + ev.Key
	default:
		reason = how + " of " + ev.Sub.Cache.Resource + " " + ev.Key
	}
	if rec != nil {
		rec.Enqueued = append(rec.Enqueued, key)
	}
	v.reconciler.Enqueue(key, reason)
}

// ctxEnqueue is ctx.enqueue of the version's handlers and schedules: the reason names the
// call running on the worker.
func (v *Version) ctxEnqueue(key string) {
	reason := "ctx.enqueue"
	w := v.recorder()
	if c := w.InFlight(); c != nil {
		reason += " in " + c.Handler + " of " + c.Object
	}
	w.Tap().AddEnqueued(key)
	v.reconciler.Enqueue(key, reason)
}

// outsidePartition refuses a reconcile key in a namespace this version's cache partition does
// not hold (--shard-cache): the replica that owns it does not see the event that named it, so
// it would be lost silently.
func (v *Version) outsidePartition(key string) error {
	if v.partition.Field != shardrange.Namespace {
		return nil
	}
	ns, _, found := strings.Cut(key, "/")
	if !found || v.partition.Contains(shardrange.Hash(ns)) {
		return nil
	}
	return fmt.Errorf("enqueue %s: namespace %q is cached by another replica, which does not see this event (shard: \"namespace\" under --shard-cache): %w; map to keys of the object's own namespace, or declare shard: \"none\"",
		key, ns, scriptcache.ErrOutsidePartition)
}
