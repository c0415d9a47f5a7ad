package shardrange_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jsinformer/jsinformer/shardrange"
)

// shares counts how many of values fall in each quarter of layout's slices (a, b, c, d: 64
// contiguous slices each), as if each quarter were one replica's.
func shares(layout shardrange.Layout, values []string) map[string]int {
	out := map[string]int{}
	for _, v := range values {
		out[string(rune('a'+layout.SliceOf(shardrange.Hash(v))/64))]++
	}
	return out
}

// TestQuantileLayoutEvensOutNamespaces: names that differ in their last characters hash into
// a few equal slices (FNV-1a), so one quarter of the slices would hold most of them; cut at
// their hashes, each quarter holds a quarter.
func TestQuantileLayoutEvensOutNamespaces(t *testing.T) {
	t.Parallel()
	for _, pattern := range []string{"tenant-%d", "team-%03d", "ns%d"} {
		var names []string
		for i := range 400 {
			names = append(names, fmt.Sprintf(pattern, i))
		}
		equal := shares(shardrange.Layout{}, names)
		quantile := shares(shardrange.QuantileLayout(names), names)
		maxEqual, maxQuantile := 0, 0
		for _, m := range []string{"a", "b", "c", "d"} {
			maxEqual, maxQuantile = max(maxEqual, equal[m]), max(maxQuantile, quantile[m])
		}
		if maxQuantile > 102 { // a quarter is 100: 64 slices of 400/256 namespaces each
			t.Errorf("%s: quantile layout: the largest share is %d of 400: %v", pattern, maxQuantile, quantile)
		}
		if maxEqual < 200 {
			t.Errorf("%s: equal slices give the largest quarter %d of 400: the names no longer show what the layout is for", pattern, maxEqual)
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
	if shardrange.QuantileLayout(many) != shardrange.QuantileLayout(append(reversed, many[:10]...)) {
		t.Error("the layout depends on the values' order or repetitions")
	}
}

// TestLayoutIsAValue: layouts built apart with the same cuts are ==; equal cuts are the zero
// Layout; SliceOf agrees with the ranges' bounds.
func TestLayoutIsAValue(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 500 {
		names = append(names, fmt.Sprintf("team-%03d", i))
	}
	a, b := shardrange.QuantileLayout(names), shardrange.QuantileLayout(slices.Clone(names))
	if a != b || a.IsZero() {
		t.Fatal("two quantile layouts of the same names differ, or are equal slices")
	}
	if !shardrange.QuantileLayout(nil).IsZero() {
		t.Error("the layout of no values is not the zero Layout")
	}
	for i := range shardrange.Slices {
		r := shardrange.Range{Lo: i, Hi: i + 1, Layout: a}
		var start uint64
		if _, err := fmt.Sscanf(r.Start(), "0x%x", &start); err != nil {
			t.Fatal(err)
		}
		if got := a.SliceOf(start); got != i {
			t.Fatalf("slice %d starts at %s, which SliceOf puts in slice %d", i, r.Start(), got)
		}
		if i > 0 && a.SliceOf(start-1) != i-1 {
			t.Fatalf("the hash before slice %d's start is in slice %d", i, a.SliceOf(start-1))
		}
	}
}

// TestLayoutSliceOfAllocatesNothing: SliceOf runs per object and event. Not parallel:
// testing.AllocsPerRun refuses to run in a parallel test.
func TestLayoutSliceOfAllocatesNothing(t *testing.T) {
	var names []string
	for i := range 500 {
		names = append(names, fmt.Sprintf("team-%03d", i))
	}
	for _, l := range []shardrange.Layout{{}, shardrange.QuantileLayout(names)} {
		slice := 0
		if allocs := testing.AllocsPerRun(100, func() { slice = l.SliceOf(shardrange.Hash(names[slice%len(names)])) }); allocs != 0 {
			t.Errorf("SliceOf allocates %v times per call", allocs)
		}
	}
}
