package engine

import (
	"errors"
	"fmt"

	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// Partitioned caches (Config.ShardCache, docs/sharding.md): under --sharded --shard-cache a
// script's informers list and watch only the namespaces of the hash slices this replica owns
// in the ring it acts on (package shardrange: 256 equal slices of the namespace hash, owned
// by rendezvous hashing), and every key "ns/name" is placed on its namespace's slice
// (shardrange.NamespacePlace), so the replica that handles a key is the one caching its
// object. A partition cannot change in place: each ring change this replica applies reloads
// every partitioned script with its new partition, as a hot reload does (the old version
// serves until the new one has listed its partition, then its informers and their memory
// are released); until the replica first joined, partitioned scripts wait.

// errAwaitRing is a partitioned script's load before this replica has joined its ring: it is
// loaded at the first ring change applied (onShardGains).
var errAwaitRing = errors.New("await shard ring: the replica has not joined its ring yet")

// cacheLayout is the namespace layout every replica uses: equal slices, the same on every
// replica without agreeing on anything. Namespace names that hash close together stay on
// one replica (docs/sharding.md: skew; jsinformer_shard_cached_objects shows it).
var cacheLayout *shardrange.Layout

// placeKeys is sharding.Config.Place under --shard-cache: a key on its namespace's slice.
func placeKeys(shardCache bool) func(string) string {
	if !shardCache {
		return nil
	}
	return shardrange.NamespacePlace(cacheLayout)
}

// cachePartition is the partition the watches of script name get on this replica: the zero
// Partition (the whole watch) without --shard-cache or for shard: "none"; refused, with the
// reason, for what a partial cache cannot serve; errAwaitRing before the replica joined.
func (e *Engine) cachePartition(name string, def scripting.Definition, targets []version.Target) (shardrange.Partition, error) {
	if !e.cfg.ShardCache || def.Shard == scripting.ShardNone {
		return shardrange.Partition{}, nil
	}
	if err := checkPartitionable(def, targets); err != nil {
		return shardrange.Partition{}, fmt.Errorf("%s: %w", name, err)
	}
	st := e.shard.Status()
	if len(st.Members) == 0 {
		return shardrange.Partition{}, errAwaitRing
	}
	return shardrange.Assign(sharding.NewRing(st.Members...), st.Identity, shardrange.Namespace, cacheLayout), nil
}

// checkPartitionable refuses a script whose declared (or default) shard mode a partial cache
// cannot serve correctly.
func checkPartitionable(def scripting.Definition, targets []version.Target) error {
	const fix = `; declare shard: "none" to cache the whole watch on every replica`
	if def.Shard == scripting.ShardUID {
		return errors.New(`check shard mode: shard: "uid" is not served yet under --shard-cache (keys are placed by namespace, so the replica owning an object's key would not cache it)` + fix)
	}
	for _, t := range targets {
		if !t.Resource.Namespaced {
			return fmt.Errorf("check shard mode: %s is cluster-scoped and cannot be partitioned by namespace%s", t.Resource, fix)
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

// partitioned reports whether v's watches are partitioned.
func partitioned(v *loaded) bool {
	for _, t := range v.ver.Informed() {
		if !t.Key.Partition.IsZero() {
			return true
		}
	}
	return false
}

// reloadPartitioned loads again, with the partitions of the ring now applied, every
// partitioned script (and those that waited for the ring), and gives the new versions the
// gained keys events named meanwhile: the serving versions' caches do not hold the gained
// namespaces, so the keys are reconciled on the new ones, once they have listed them.
func (e *Engine) reloadPartitioned(named []string) {
	never := func(string) bool { return false }
	var srcs []plugins.Source
	for _, p := range e.plugins {
		if v := p.latest(); v != nil && partitioned(v) {
			srcs = append(srcs, v.src)
		}
	}
	for name, src := range e.awaitRing {
		delete(e.awaitRing, name)
		srcs = append(srcs, src)
	}
	for _, src := range srcs {
		e.loadOrReport(src, "") // not load: the same content must load again here
		if p := e.plugins[src.Name]; p != nil && p.pending != nil && partitioned(p.pending) && len(named) > 0 {
			p.pending.ver.ReplayGained(never, named)
		}
	}
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
