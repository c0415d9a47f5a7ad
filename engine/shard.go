package engine

import (
	"github.com/jsinformer/jsinformer/engine/internal/shardgate"
	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/shardrange"
	"github.com/jsinformer/jsinformer/status"
)

// Sharding (Config.Sharding): every replica keeps its informers, stores and indexes complete,
// but calls handlers and reconciles only for the keys it owns (package sharding: a Lease per
// replica, rendezvous hashing, a drain hand-over; package engine/internal/shardgate: this
// replica's member, its goroutine and the questions asked before each call). An object's key
// is its namespace/name, so an object and the reconcile key of the same name belong to the
// same replica whatever the script or resource; a schedule entry belongs to the replica
// owning "schedule:SCRIPT#INDEX", and a metric family with collect to the one owning
// "metric:SCRIPT#FAMILY", which alone computes and serves it; every replica audits every
// object, and an audit script's reports in a namespace are written by the one owning
// "report:SCRIPT#NAMESPACE" (audit.ReportKey; reports.go). The keys a replica gains are replayed on the workers of the
// serving and syncing versions (version.Version.ReplayGained): their cached objects as initial
// adds, the reconcile keys their watch entries map to, and the gained reconcile keys events
// named while another replica handled them (an object deleted meanwhile, a key without one). What a version asks before each
// call is package engine/internal/version's.

// shardOwner is this replica's part of the ring (package engine/internal/shardgate); a nil
// one (no sharding) owns every key.
type shardOwner = *shardgate.Gate

// newShard builds this replica's ring member; it contacts nothing.
func (e *Engine) newShard(cfg LeaderElection) (shardOwner, error) {
	return shardgate.New(e.cfg.RESTConfig, shardgate.Config{Namespace: cfg.Namespace, Name: cfg.Name, Identity: cfg.Identity,
		LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
		DrainTimeout: e.cfg.HandlerTimeout + stopGrace, Logger: e.cfg.Logger, // New runs before init sets e.logger
		Plan: e.cfg.ShardCache, Replan: replanEvery * cfg.RetryPeriod, Namespaces: e.cfg.shardNamespaces, AwaitListed: e.cfg.ShardCache})
}

// replanEvery is, in retry periods, how often the ring's lowest replica plans its ring again
// under --shard-cache (one minute with the default two-second retry period): namespaces come
// and go without the ring changing, and a plan that no longer spreads them is made anew.
const replanEvery = 30

// stopGrace is what a call gets past the handler timeout before it is abandoned.
const stopGrace = 1e9 // one second, as at shutdown

// onShardGains replays the keys this replica gained on every serving and syncing version
// whose cache is whole, and on the partitioned versions that cache the new ring's partition
// (shardcache.go).
func (e *Engine) onShardGains() {
	has, named := e.shard.TakeGains()
	if has == nil {
		return
	}
	for _, p := range e.plugins {
		for _, v := range []*loaded{p.current, p.pending} {
			if v != nil && !partitioned(v) {
				v.ver.ReplayGained(has, named)
			}
		}
	}
	e.replayPartitioned(has, named)
	e.repartition() // a replica that lost keys caches them no longer
	e.reportListed()
	e.book.Bump()
}

func (e *Engine) shardStatus() *status.ShardStatus { return e.shard.Status() }

// shardOwned counts, per script with a serving version, the cached objects this replica
// owns; each store is read under its lock.
func (e *Engine) shardOwned() map[string]int {
	out := map[string]int{}
	for _, v := range e.needs.versions() {
		if v.ver.CurrentState() != version.StateCurrent {
			continue
		}
		n, byUID := 0, partitionOf(v).Field == shardrange.UID
		for _, sub := range v.ver.Subscriptions() {
			for _, key := range v.ver.Store().Keys(sub.Cache.Resource) {
				if byUID {
					key = v.ver.OwnerKey(key, v.ver.Store().Get(sub.Cache.Resource, key))
				}
				if e.shard.Handles(key) {
					n++
				}
			}
		}
		out[v.ver.Script()] = n
	}
	return out
}
