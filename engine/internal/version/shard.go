package version

import (
	"strconv"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/shardrange"
)

// A version under sharding (package engine/internal/shardgate: this replica's part of the
// ring): it keeps its store and indexes complete, but calls handlers and reconciles only for
// the keys this replica owns; the keys it gains are replayed on its worker (EventGained).

// ReplayGained queues on v's worker the replay of the keys has says this replica gained, and
// the reconcile keys named, if v has subscribed. Called by the loader, which owns v's
// subscriptions.
func (v *Version) ReplayGained(has func(string) bool, named []string) {
	if len(v.subs) == 0 {
		return
	}
	subs := append([]*Subscription(nil), v.subs...) // the worker must not read the loader's list
	v.queue.Push(Event{Kind: EventGained, Gained: &Gained{Has: has, Named: named, Subs: subs}})
}

// begin starts a call on key: false when this runner calls nothing (a standby, a lost Lease)
// or another replica owns key. end is called when the call is over.
func (v *Version) begin(key string) (end func(), ok bool) {
	if v.standby || !v.lead.Valid() {
		return nil, false
	}
	return v.shard.Begin(key)
}

// OwnerKey is the key whose owner handles obj, cached under key: key itself, or the
// object's shardrange.UIDKey when v's caches are partitioned by uid, so that the replica
// handling an object is the one whose uid slices cache it.
func (v *Version) OwnerKey(key string, obj scripting.Object) string {
	if v.partition.Field != shardrange.UID {
		return key
	}
	meta, _ := obj["metadata"].(map[string]any)
	uid, _ := meta["uid"].(string)
	return shardrange.UIDKey(uid)
}

// handles reports whether this runner enqueues reconcile key: always without sharding. A key
// refused is remembered by the shard gate, and queued again if this replica gains it.
func (v *Version) handles(key string) bool { return v.shard.Accept(key) }

// scheduleKey is the key that decides which replica runs schedule entry i.
func (v *Version) scheduleKey(i int) string { return "schedule:" + v.name + "#" + strconv.Itoa(i) }

// collectKey is the key that decides which replica computes and serves metric family.
func (v *Version) collectKey(family string) string { return "metric:" + v.name + "#" + family }

// replayGained runs on the worker: every cached object whose key was gained is shown to the
// handlers as an initial add, and every reconcile key the cached objects map to that was
// gained is enqueued, as after a re-list; then the gained keys that events named while
// another replica handled them are enqueued: no cached object may map to them any more.
func (v *Version) replayGained(g *Gained) {
	v.enqueueOnly = g.Has
	defer func() { v.enqueueOnly = nil }()
	defer v.enqueueNamed(g.Named)
	for _, sub := range g.Subs {
		for _, key := range v.store.Keys(sub.Cache.Resource) {
			obj := v.store.Get(sub.Cache.Resource, key)
			if obj == nil {
				continue
			}
			ev := Event{Kind: EventAdd, Sub: sub, Key: key, Obj: obj, Initial: true}
			gained := g.Has(v.OwnerKey(key, obj))
			if !gained && v.reconciler == nil {
				continue
			}
			var rec *inspection.TraceRecord
			if gained {
				rec = v.traceStart(ev)
				v.call(ev, rec)
			}
			if v.reconciler != nil {
				v.enqueueFor(ev, rec)
			}
			v.traceDone(rec)
		}
	}
}

// notOwned notes in rec, when recording, which replica owns key when it is another's.
func (v *Version) notOwned(key string, rec *inspection.TraceRecord) {
	if rec != nil {
		if owner := v.shard.OtherOwner(key); owner != "" {
			rec.Owner = owner
		}
	}
}

// enqueueNamed queues the reconcile keys named while another replica handled them.
func (v *Version) enqueueNamed(keys []string) {
	if v.reconciler == nil {
		return
	}
	for _, key := range keys {
		v.reconciler.Enqueue(key, "named by an event while another replica handled it")
	}
}

// cachePartition is what ctx.cache may answer for an informer partitioned by p (--shard-cache):
// nil for a full cache; the namespaces of p's slices when p is by namespace; nothing when by
// uid (every namespace is split).
func cachePartition(p shardrange.Partition) *scriptcache.Partition {
	switch {
	case p.IsZero():
		return nil
	case p.Field == shardrange.Namespace:
		return &scriptcache.Partition{Field: p.Field.Short(), Namespace: func(ns string) bool { return p.Contains(shardrange.Hash(ns)) }}
	}
	return &scriptcache.Partition{Field: p.Field.Short()}
}
