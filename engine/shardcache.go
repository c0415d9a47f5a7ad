package engine

import (
	"errors"
	"fmt"

	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// Partitioned caches (Config.ShardCache, docs/sharding.md): under --sharded --shard-cache a
// script's informers list and watch only the namespaces of the hash slices this replica owns
// (package shardrange: 256 slices of the namespace hash, cut and owned as the ring's plan
// says, which its lowest member makes from the namespaces: shardrange.Plan, sharding.View),
// and every key "ns/name" is placed on its namespace's slice (shardrange.Plan.KeyOwner), so
// the replica that handles a key is the one caching its object.
//
// A partition cannot change in place, so a partitioned script is loaded again, with the same
// content, as a hot reload is, whenever the partition this replica needs changes
// (wantPartition: the slices it owns in the ring it acts on and in the one it moves to): the
// new version lists the new partition while the old one serves, then takes over, and the old
// version's informers and their memory are released. When a replica observes a new ring it
// grows its caches at once to the slices it gains; once every partitioned script's serving
// version caches them it records its caches listed (reportListed, sharding's AwaitListed),
// and only when every other member of the new ring has listed does a replica stop handling
// the keys it loses: a key's new owner watches it before its old owner lets it go, so no
// event in between is missed. The drain-before-gain protocol then runs as without
// partitions; at the gain the version caching the new ring's slices replays the gained keys
// (onShardGains), and a replica that lost slices loads its partitioned scripts again to cache
// only what it keeps. Until the replica first observed its ring, partitioned scripts wait.
// A replica that stops first hands its keys over the same way (leaveRing, leave.go).

// errAwaitRing is a partitioned script's load before this replica has joined its ring: it is
// loaded at the first ring change applied (onShardGains).
var errAwaitRing = errors.New("await shard ring: the replica has not joined its ring yet")

// cachePartition is the partition the watches of script name get on this replica: the zero
// Partition (the whole watch) without --shard-cache or for shard: "none"; refused, with the
// reason, for what a partial cache cannot serve; errAwaitRing before the replica joined.
func (e *Engine) cachePartition(name string, def scripting.Definition, targets []version.Target) (shardrange.Partition, error) {
	if !e.cfg.ShardCache || def.Shard == scripting.ShardNone {
		return shardrange.Partition{}, nil
	}
	field := shardrange.Namespace
	if def.Shard == scripting.ShardUID {
		field = shardrange.UID
	}
	if err := checkPartitionable(def, field, targets); err != nil {
		return shardrange.Partition{}, fmt.Errorf("%s: %w", name, err)
	}
	want, ok := e.wantPartition(field)
	if !ok {
		return shardrange.Partition{}, errAwaitRing
	}
	return want, nil
}

// wantPartition is the partition of field this replica's caches must hold: the slices it owns
// in the ring it moves to and in the one it acts on, since it keeps handling the keys it is
// to lose until their new owners have listed them (sharding.Config.AwaitListed). Once the
// move is applied they are the same ring. A move between two namespace layouts (the plan cut
// the namespaces anew) caches every namespace until it is applied: no slice mask spans two
// layouts. False before the replica has observed a ring.
func (e *Engine) wantPartition(field shardrange.Field) (shardrange.Partition, bool) {
	target, self := e.shard.Target()
	p, ok := viewPartition(target, self, field)
	if !ok {
		return shardrange.Partition{}, false
	}
	if active, ok := viewPartition(e.shard.Active(), self, field); ok {
		if active.Layout != p.Layout {
			return shardrange.Partition{Field: field, Mask: shardrange.All, Layout: p.Layout}, true
		}
		p.Mask = p.Mask.Or(active.Mask)
	}
	return p, true
}

// viewPartition is the partition of field self caches in view: the slices its plan gives self
// (shardrange.Plan.Partition; uids are always cut into equal slices). False for an empty view
// (under --shard-cache every view has a plan: sharding.Config.Planner).
func viewPartition(view sharding.View, self string, field shardrange.Field) (shardrange.Partition, bool) {
	if len(view.Ring) == 0 {
		return shardrange.Partition{}, false
	}
	plan, err := shardrange.DecodePlan(view.Plan)
	if err != nil { // the member's Placer accepted it: not reached
		return shardrange.Partition{}, false
	}
	return plan.Partition(self, field), true
}

// checkPartitionable refuses a script whose declared (or default) shard mode a partial cache
// cannot serve correctly.
func checkPartitionable(def scripting.Definition, field shardrange.Field, targets []version.Target) error {
	const fix = `; declare shard: "none" to cache the whole watch on every replica`
	if field == shardrange.UID && def.Reconcile {
		return errors.New(`check shard mode: reconcile cannot be partitioned by uid (a reconcile key "namespace/name" names no uid, so no replica is sure to cache its object); declare shard: "namespace", or shard: "none"`)
	}
	for _, t := range targets {
		if field == shardrange.Namespace && !t.Resource.Namespaced {
			return fmt.Errorf(`check shard mode: %s is cluster-scoped and cannot be partitioned by namespace; declare shard: "uid" (handlers without lookups), or shard: "none"`, t.Resource)
		}
	}
	if def.Validate || def.Mutate {
		return errors.New("check shard mode: admission (validate, mutate, audit) is served by every replica for any namespace and needs the whole cluster" + fix)
	}
	for _, m := range def.Metrics {
		if m.Collect {
			return fmt.Errorf("check shard mode: metric %s has collect, which one replica computes from its cache for the whole cluster%s", m.Name, fix)
		}
	}
	return nil
}

// partitionOf is the partition of v's watches (all have the same): the zero Partition when
// v caches its watches whole.
func partitionOf(v *loaded) shardrange.Partition {
	for _, t := range v.ver.Informed() {
		return t.Key.Partition
	}
	return shardrange.Partition{}
}

// partitioned reports whether v's watches are partitioned.
func partitioned(v *loaded) bool { return !partitionOf(v).IsZero() }

// onShardTarget loads again every partitioned script whose newest version does not cache the
// partition this replica now needs (wantPartition), and those that waited for a ring.
func (e *Engine) onShardTarget() {
	if view, _ := e.shard.Target(); len(view.Ring) == 0 {
		return // fenced: the versions keep their partitions until the ring is joined again
	}
	e.repartition()
	for name, src := range e.awaitRing {
		delete(e.awaitRing, name)
		e.loadOrReport(src, "")
	}
	e.reportListed()
	e.book.Bump()
}

// repartition loads again every partitioned script whose newest version does not cache the
// partition wantPartition gives.
func (e *Engine) repartition() {
	for _, p := range e.plugins {
		v := p.latest()
		if v == nil || !partitioned(v) {
			continue
		}
		if want, ok := e.wantPartition(partitionOf(v).Field); ok && partitionOf(v) != want {
			e.loadOrReport(v.src, "") // not load: the same content must load again here
		}
	}
}

// reportListed tells the ring member that this replica's caches hold what the ring it moves
// to needs (sharding.Member.SetListed) once every partitioned script's serving version
// caches its wantPartition: until then the keys' old owners keep handling them.
func (e *Engine) reportListed() {
	view, _ := e.shard.Target()
	if !e.cfg.ShardCache || len(view.Ring) == 0 || len(e.awaitRing) > 0 {
		return
	}
	for _, p := range e.plugins {
		latest := p.latest()
		if latest == nil || !partitioned(latest) {
			continue
		}
		want, _ := e.wantPartition(partitionOf(latest).Field)
		if p.current == nil || partitionOf(p.current) != want {
			return
		}
	}
	e.shard.SetListed(view.Fingerprint())
}

// replayPartitioned replays the keys this replica gained on the partitioned versions that
// cache the partition of the ring now applied (loaded when it was observed: onShardTarget):
// their caches hold the gained namespaces. A partitioned script with no such version is
// loaded again now, and its new version, whose list replays what it gained, is given the
// gained keys events named.
func (e *Engine) replayPartitioned(has func(string) bool, named []string) {
	_, self := e.shard.Target()
	active := e.shard.Active()
	never := func(string) bool { return false }
	for _, p := range e.plugins {
		latest := p.latest()
		if latest == nil || !partitioned(latest) {
			continue
		}
		replayed := false
		want, _ := viewPartition(active, self, partitionOf(latest).Field)
		for _, v := range []*loaded{p.current, p.pending} {
			if v != nil && covers(partitionOf(v), want) {
				v.ver.ReplayGained(has, named)
				replayed = true
			}
		}
		if replayed {
			continue
		}
		e.loadOrReport(latest.src, "")
		if p.pending != nil && partitioned(p.pending) && len(named) > 0 {
			p.pending.ver.ReplayGained(never, named)
		}
	}
}

// covers reports whether p caches every object of want.
func covers(p, want shardrange.Partition) bool {
	return p.Field == want.Field && p.Layout == want.Layout && p.Mask.Covers(want.Mask)
}

// shardCached counts, per partitioned script with a serving version, the objects its cache
// holds on this replica (jsinformer_shard_cached_objects): the skew between replicas shows
// in how these differ.
func (e *Engine) shardCached() map[string]int {
	out := map[string]int{}
	for _, v := range e.needs.versions() {
		if v.ver.CurrentState() == version.StateCurrent && partitioned(v) {
			out[v.ver.Script()] = v.ver.Store().Size()
		}
	}
	return out
}
