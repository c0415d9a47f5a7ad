package shardrange_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// shares counts how many of values each member of a 4-member ring keeps under layout.
func shares(layout *shardrange.Layout, values []string) map[string]int {
	ring := sharding.NewRing("a", "b", "c", "d")
	out := map[string]int{}
	for _, m := range ring {
		p := shardrange.Assign(ring, m, shardrange.Namespace, layout)
		for _, v := range values {
			if p.Contains(shardrange.Hash(v)) {
				out[m]++
			}
		}
	}
	return out
}

// TestQuantileLayoutEvensOutNamespaces: names that differ in their last characters hash into
// a few equal slices (FNV-1a), so one replica would hold most of them; cut at their hashes,
// each of 4 replicas holds about a quarter.
func TestQuantileLayoutEvensOutNamespaces(t *testing.T) {
	t.Parallel()
	for _, pattern := range []string{"tenant-%d", "team-%03d", "ns%d"} {
		var names []string
		for i := range 400 {
			names = append(names, fmt.Sprintf(pattern, i))
		}
		equal := shares(nil, names)
		quantile := shares(shardrange.QuantileLayout(names), names)
		maxEqual, maxQuantile := 0, 0
		for _, m := range []string{"a", "b", "c", "d"} {
			maxEqual, maxQuantile = max(maxEqual, equal[m]), max(maxQuantile, quantile[m])
		}
		if maxQuantile > 150 { // a quarter is 100; 256 slices over 4 members: ±11 %
			t.Errorf("%s: quantile layout: the largest share is %d of 400: %v", pattern, maxQuantile, quantile)
		}
		t.Logf("%s: largest share of 400 over 4 replicas: equal slices %d, quantile %d", pattern, maxEqual, maxQuantile)
	}
}

// TestQuantileLayoutCuts: cuts strictly increase for any input, and depend on the set of
// values only.
func TestQuantileLayoutCuts(t *testing.T) {
	t.Parallel()
	inputs := [][]string{nil, {"one"}, {"a", "b"}, {"x", "x", "x"}}
	var many []string
	for i := range 1000 {
		many = append(many, fmt.Sprint(i))
	}
	inputs = append(inputs, many)
	for _, values := range inputs {
		l := shardrange.QuantileLayout(values)
		ranges := shardrange.Partition{Field: shardrange.UID, Mask: shardrange.All, Layout: l}.Ranges()
		if len(ranges) != 1 || ranges[0].Start() != "0x0000000000000000" || ranges[0].End() != "0x10000000000000000" {
			t.Errorf("%d values: every slice is one range of the whole space, got %v", len(values), ranges)
		}
		prev := ""
		for i := range shardrange.Slices {
			r := shardrange.Range{Lo: i, Hi: i + 1, Layout: l}
			if r.Start() <= prev && i > 0 || r.Start() >= r.End() && r.End() != "0x10000000000000000" {
				t.Fatalf("%d values: slice %d is [%s, %s) after a slice starting at %s", len(values), i, r.Start(), r.End(), prev)
			}
			prev = r.Start()
		}
	}
	reversed := slices.Clone(many)
	slices.Reverse(reversed)
	if *shardrange.QuantileLayout(many) != *shardrange.QuantileLayout(append(reversed, many[:10]...)) {
		t.Error("the layout depends on the values' order or repetitions")
	}
}

// TestNamespacePlaceFollowsThePartition: a key "ns/name" belongs, by rendezvous over its
// placed ring key, to the member whose namespace partition holds ns, for equal and quantile
// layouts; keys without a namespace are placed on themselves.
func TestNamespacePlaceFollowsThePartition(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 300 {
		names = append(names, fmt.Sprintf("team-%03d", i))
	}
	ring := sharding.NewRing("a", "b", "c")
	for _, layout := range []*shardrange.Layout{nil, shardrange.QuantileLayout(names)} {
		place := shardrange.NamespacePlace(layout)
		for _, m := range ring {
			p := shardrange.Assign(ring, m, shardrange.Namespace, layout)
			for _, ns := range names {
				key := ns + "/object"
				if owns, caches := ring.Owner(place(key)) == m, p.Contains(shardrange.Hash(ns)); owns != caches {
					t.Fatalf("key %s: owned by %s = %v, in its namespace partition = %v", key, m, owns, caches)
				}
			}
		}
		for _, key := range []string{"cluster-object", "schedule:team/a.js#0", "metric:team/b.js#family"} {
			if got := place(key); got != key {
				t.Errorf("place(%q) = %q, want the key itself", key, got)
			}
		}
	}
}

// TestUIDKeyFollowsTheUIDPartition: an object's UIDKey belongs to the member whose uid
// partition holds its uid, whatever the namespace layout.
func TestUIDKeyFollowsTheUIDPartition(t *testing.T) {
	t.Parallel()
	ring := sharding.NewRing("a", "b", "c", "d")
	for _, layout := range []*shardrange.Layout{nil, shardrange.QuantileLayout([]string{"x", "y", "z"})} {
		place := shardrange.NamespacePlace(layout)
		owned := map[string]int{}
		for i := range 2000 {
			uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", i*2654435761, i)
			owner := ring.Owner(place(shardrange.UIDKey(uid)))
			owned[owner]++
			for _, m := range ring {
				if caches := shardrange.Assign(ring, m, shardrange.UID, nil).Contains(shardrange.Hash(uid)); caches != (owner == m) {
					t.Fatalf("uid %s: owned by %s, in %s's uid partition = %v", uid, owner, m, caches)
				}
			}
		}
		if len(owned) != len(ring) {
			t.Errorf("2,000 uids fell on %d of %d members: %v", len(owned), len(ring), owned)
		}
	}
}
