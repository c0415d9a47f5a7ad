package shardrange

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Layout says where the Slices slices of the hash space are cut: slice i is
// [cut(i), cut(i+1)), cut(0) = 0 and cut(Slices) = 2^64. The nil *Layout cuts the space into
// equal slices, which suits uid (random UUIDs hash uniformly) but not namespace names: FNV-1a
// hardly carries the last bytes of a short string into its top bits, so "tenant-1" …
// "tenant-200" hash into 3 of 256 equal slices (the same for "team-001" …). QuantileLayout
// cuts at the hashes of the namespaces that exist, so each slice holds about as many.
//
// A Layout is immutable once built. Partitions compare layouts by pointer: whoever builds
// partitions shares one *Layout among all those of one layout.
type Layout struct {
	cuts [Slices - 1]uint64 // cut(1) … cut(Slices-1), strictly increasing
}

// QuantileLayout cuts the hash space so that the slices hold about equally many of values'
// hashes: the first cut at the hash a slice's share of them in, and so on. With fewer
// distinct hashes than slices, some slices hold none. The result depends only on the set of
// values, not their order or repetitions.
func QuantileLayout(values []string) *Layout {
	hashes := make([]uint64, len(values))
	for i, v := range values {
		hashes[i] = Hash(v)
	}
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	l := &Layout{}
	prev := uint64(0)
	for i := range l.cuts {
		cut := uint64(i+1) << sliceShift // equal cuts where there are no values
		if n := len(hashes); n > 0 {
			cut = hashes[(i+1)*n/Slices]
		}
		// Strictly increasing, leaving room for the cuts after this one.
		cut = min(max(cut, prev+1), math.MaxUint64-uint64(len(l.cuts)-1-i))
		l.cuts[i], prev = cut, cut
	}
	return l
}

// cut is where slice i starts (i < Slices); cut(0) = 0.
func (l *Layout) cut(i int) uint64 {
	switch {
	case i == 0:
		return 0
	case l == nil:
		return uint64(i) << sliceShift
	}
	return l.cuts[i-1]
}

// SliceOf is the slice a hash falls in.
func (l *Layout) SliceOf(hash uint64) int {
	if l == nil {
		return int(hash >> sliceShift)
	}
	return sort.Search(len(l.cuts), func(i int) bool { return l.cuts[i] > hash })
}

// bound is the shardSelector literal of where slice i starts: "0x" and 16 hex digits, or
// "0x10000000000000000" (2^64) for i = Slices.
func (l *Layout) bound(i int) string {
	if i >= Slices {
		return "0x10000000000000000"
	}
	return fmt.Sprintf("0x%016x", l.cut(i))
}
