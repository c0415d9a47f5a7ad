package shardrange

import (
	"strconv"
	"strings"

	"github.com/jsinformer/jsinformer/sharding"
)

// SliceKey is the ring key slice i is owned by: "shardrange/i". Keys of objects
// ("namespace/name") and of schedules and metrics never look like it.
func SliceKey(i int) string { return "shardrange/" + strconv.Itoa(i) }

// Assign returns the partition of field, cut by layout, that member owns in ring: the slices whose
// SliceKey the ring's rendezvous hashing gives to member. A member not in the ring owns
// nothing. Every slice has exactly one owner in a non-empty ring, and a membership change
// moves only the slices of the member that came or went (about Slices/N of them).
func Assign(ring sharding.Ring, member string, field Field, layout *Layout) Partition {
	p := Partition{Field: field, Layout: layout}
	for i := 0; i < Slices; i++ {
		if ring.Owner(SliceKey(i)) == member {
			p.Mask = p.Mask.With(i)
		}
	}
	return p
}

// UIDKey is the key whose owner handles the object of uid in a script partitioned by uid:
// NamespacePlace places it on the uid's equal slice, where the uid partitions cache it.
func UIDKey(uid string) string { return uidPrefix + uid }

const uidPrefix = "uid:"

// NamespacePlace is the sharding.Config.Place of replicas whose caches are partitioned with
// layout by namespace (and, equal slices, by uid): a key "ns/name" (an object's, or a
// reconcile key) is placed on its namespace's slice, so it belongs to the member whose
// partition holds the namespace: the one caching its object; a UIDKey is placed on its uid's
// equal slice, for the same reason. Other keys are their own ring keys: cluster-scoped
// objects' "name" (their resources are cached whole on every replica unless partitioned by
// uid), and keys whose part before the first "/" holds a ':' ("schedule:team/a.js#0",
// "metric:…"), which no namespace name can.
func NamespacePlace(layout *Layout) func(key string) string {
	return func(key string) string {
		if uid, ok := strings.CutPrefix(key, uidPrefix); ok {
			return SliceKey(SliceOf(Hash(uid)))
		}
		ns, _, found := strings.Cut(key, "/")
		if !found || strings.Contains(ns, ":") {
			return key
		}
		return SliceKey(layout.SliceOf(Hash(ns)))
	}
}
