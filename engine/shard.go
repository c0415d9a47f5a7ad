package engine

import (
	"strconv"

	"github.com/jsinformer/jsinformer/engine/internal/shardgate"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/status"
)

// Sharding (Config.Sharding): every replica keeps its informers, stores and indexes complete,
// but calls handlers and reconciles only for the keys it owns (package sharding: a Lease per
// replica, rendezvous hashing, a drain hand-over; package engine/internal/shardgate: this
// replica's member, its goroutine and the questions asked before each call). An object's key
// is its namespace/name, so an object and the reconcile key of the same name belong to the
// same replica whatever the script or resource; a schedule entry belongs to the replica
// owning "schedule:SCRIPT#INDEX". The keys a replica gains are replayed on the workers of the
// serving versions (eventGained): their cached objects as initial adds, and the reconcile
// keys their watch entries map to.

// shardOwner is this replica's part of the ring (package engine/internal/shardgate); a nil
// one (no sharding) owns every key.
type shardOwner = *shardgate.Gate

// ErrShardLost is returned by Run when a sharded runner could not renew its Lease.
var ErrShardLost = sharding.ErrLost

// newShard builds this replica's ring member; it contacts nothing.
func (e *Engine) newShard(cfg LeaderElection) (shardOwner, error) {
	return shardgate.New(e.cfg.RESTConfig, shardgate.Config{Namespace: cfg.Namespace, Name: cfg.Name, Identity: cfg.Identity,
		LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
		DrainTimeout: e.cfg.HandlerTimeout + stopGrace, Logger: e.cfg.Logger}) // New runs before init sets e.logger
}

// stopGrace is what a call gets past the handler timeout before it is abandoned.
const stopGrace = 1e9 // one second, as at shutdown

// onShardLost is the loader's side of a lost Lease: Run returns the error, the runner exits.
func (e *Engine) onShardLost(err error) error {
	e.logger.Error("shard lease lost: handler calls and writes stopped; exiting so that the other replicas take the keys over",
		"identity", e.cfg.Sharding.Identity, "error", err.Error())
	return err
}

// onShardGains replays the keys this replica gained on every serving and syncing version.
func (e *Engine) onShardGains() {
	has := e.shard.TakeGains()
	if has == nil {
		return
	}
	for _, p := range e.plugins {
		for _, v := range []*version{p.current, p.pending} {
			if v != nil && len(v.subs) > 0 {
				subs := append([]*subscription(nil), v.subs...)
				v.queue.Push(event{Kind: eventGained, Gained: &gainedKeys{Has: has, Subs: subs}})
			}
		}
	}
	e.book.Bump()
}

// begin starts a call on key: false when this runner calls nothing (a standby, a lost Lease)
// or another replica owns key. end is called when the call is over.
func (v *version) begin(key string) (end func(), ok bool) {
	if v.standby || !v.lead.Valid() {
		return nil, false
	}
	return v.shard.Begin(key)
}

// handles reports whether this runner enqueues reconcile key: always without sharding.
func (v *version) handles(key string) bool { return v.shard.Handles(key) }

// scheduleKey is the key that decides which replica runs schedule entry i.
func (v *version) scheduleKey(i int) string { return "schedule:" + v.name + "#" + strconv.Itoa(i) }

// replayGained runs on the worker: every cached object whose key was gained is shown to the
// handlers as an initial add, and every reconcile key the cached objects map to that was
// gained is enqueued, as after a re-list.
func (v *version) replayGained(g *gainedKeys) {
	v.enqueueOnly = g.Has
	defer func() { v.enqueueOnly = nil }()
	for _, sub := range g.Subs {
		for _, key := range v.store.Keys(sub.Cache.Resource) {
			obj := v.store.Get(sub.Cache.Resource, key)
			if obj == nil {
				continue
			}
			ev := event{Kind: eventAdd, Sub: sub, Key: key, Obj: obj, Initial: true}
			gained := g.Has(key)
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
func (v *version) notOwned(key string, rec *inspection.TraceRecord) {
	if rec != nil {
		if owner := v.shard.OtherOwner(key); owner != "" {
			rec.Owner = owner
		}
	}
}

func (e *Engine) shardStatus() *status.ShardStatus { return e.shard.Status() }

// shardOwned counts, per script with a serving version, the cached objects this replica
// owns; each store is read under its lock.
func (e *Engine) shardOwned() map[string]int {
	out := map[string]int{}
	for _, v := range e.needs.versions() {
		if v.currentState() != stateCurrent {
			continue
		}
		n := 0
		for _, sub := range v.subscriptions() {
			for _, key := range v.store.Keys(sub.Cache.Resource) {
				if e.shard.Handles(key) {
					n++
				}
			}
		}
		out[v.name] = n
	}
	return out
}
