package shardrange_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/shardrange"
)

// TestHashIsAPIMachinerys holds Hash to apimachinery's sharding.HashField, which the API
// server filters with.
func TestHashIsAPIMachinerys(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "default", "kube-system", "0d5f1c1e-8f0e-4c55-9a43-3a7f0e0c9a11", "ü", "a\x00b"} {
		if got, want := fmt.Sprintf("%016x", shardrange.Hash(v)), apisharding.HashField(v); got != want {
			t.Errorf("Hash(%q) = %s, apimachinery's HashField = %s", v, got, want)
		}
	}
}

// requirements turns a partition into apimachinery's selector, built as the API server's
// parser builds it from the selector string.
func requirements(p shardrange.Partition) apisharding.Selector {
	var reqs []apisharding.ShardRangeRequirement
	for _, r := range p.Ranges() {
		reqs = append(reqs, apisharding.ShardRangeRequirement{Key: string(p.Field), Start: r.Start(), End: r.End()})
	}
	return apisharding.NewSelector(reqs...)
}

// TestSelectorMatchesAPIMachinery checks, for random partitions and objects, that the
// selector is written as the API server writes the one it applied, and that Keeps gives
// apimachinery's Matches verdict.
func TestSelectorMatchesAPIMachinery(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	masks := []shardrange.Mask{{1}, {0, 0, 0, 1 << 63}, {^uint64(0), ^uint64(0)}, alternating, {^uint64(0), 0, 5, ^uint64(0) >> 1}}
	for range 20 {
		masks = append(masks, shardrange.Mask{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()})
	}
	var names []string
	for i := range 300 {
		names = append(names, "ns-"+strconv.Itoa(i))
	}
	for _, field := range []shardrange.Field{shardrange.Namespace, shardrange.UID} {
		for _, layout := range []shardrange.Layout{{}, shardrange.QuantileLayout(names), shardrange.QuantileLayout(nil)} {
			for _, mask := range masks {
				p := shardrange.Partition{Field: field, Mask: mask, Layout: layout}
				sel := requirements(p)
				if got, want := p.Selector(), sel.String(); got != want {
					t.Fatalf("Selector() = %q, apimachinery writes %q", got, want)
				}
				for i := range 200 {
					u := &unstructured.Unstructured{}
					u.SetNamespace("ns-" + strconv.Itoa(i))
					u.SetUID(apiTypesUID(rng))
					want, err := sel.Matches(u)
					if err != nil {
						t.Fatalf("apimachinery Matches: %v", err)
					}
					if got := p.KeepsObject(u); got != want {
						t.Fatalf("%s: Keeps(%s %s) = %v, apimachinery says %v", p, u.GetNamespace(), u.GetUID(), got, want)
					}
				}
			}
		}
	}
}

func apiTypesUID(rng *rand.Rand) types.UID {
	return types.UID(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint64()&0xffffffffffff))
}

// alternating holds every other slice: the longest selector, 128 clauses.
var alternating = shardrange.Mask{0x5555555555555555, 0x5555555555555555, 0x5555555555555555, 0x5555555555555555}

func TestSelectorAndRanges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		p        shardrange.Partition
		selector string
		str      string
	}{
		{"none", shardrange.Partition{}, "", "none"},
		{"full", shardrange.Partition{Field: shardrange.UID, Mask: shardrange.All}, "", "uid slices 0-255 of 256"},
		{"first half", shardrange.Partition{Field: shardrange.UID, Mask: shardrange.Mask{^uint64(0), ^uint64(0)}},
			"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')", "uid slices 0-127 of 256"},
		{"last slice and first", shardrange.Partition{Field: shardrange.Namespace, Mask: shardrange.Mask{1, 0, 0, 1 << 63}},
			"shardRange(object.metadata.namespace, '0x0000000000000000', '0x0100000000000000') || " +
				"shardRange(object.metadata.namespace, '0xff00000000000000', '0x10000000000000000')",
			"namespace slices 0,255 of 256"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.p.Selector(); got != tc.selector {
				t.Errorf("Selector() = %q, want %q", got, tc.selector)
			}
			if got := tc.p.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		p  shardrange.Partition
		ok bool
	}{
		{shardrange.Partition{}, true},
		{shardrange.Partition{Field: shardrange.UID, Mask: shardrange.Mask{2}}, true},
		{shardrange.Partition{Field: shardrange.Namespace}, false},
		{shardrange.Partition{Field: "object.metadata.name", Mask: shardrange.Mask{1}}, false},
	}
	for _, tc := range cases {
		if err := tc.p.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tc.p, err, tc.ok)
		}
	}
}
