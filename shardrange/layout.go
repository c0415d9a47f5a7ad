package shardrange

import (
	"fmt"
	"math"
	"slices"
	"unique"
)

// Layout says where the Slices slices of the hash space are cut: slice i is
// [cut(i), cut(i+1)), cut(0) = 0 and cut(Slices) = 2^64. The zero Layout cuts the space into
// equal slices, which suits uid (random UUIDs hash uniformly) but not namespace names: FNV-1a
// hardly carries the last bytes of a short string into its top bits, so "tenant-1" …
// "tenant-200" hash into 3 of 256 equal slices (the same for "team-001" …). QuantileLayout
// cuts at the hashes of the namespaces that exist, so each slice holds about as many.
//
// A Layout is a comparable value: two layouts with the same cuts are == however they were
// built (QuantileLayout, DecodePlan), so Partitions holding them compare and serve as map
// keys. Cuts equal to the equal slices' are the zero Layout.
type Layout struct {
	// cuts is cut(1) … cut(Slices-1), strictly increasing, as 8-byte big-endian words,
	// interned; the zero handle: equal slices.
	cuts unique.Handle[string]
}

// cutBytes is the length of a non-zero layout's interned cuts.
const cutBytes = (Slices - 1) * 8

// QuantileLayout cuts the hash space so that the slices hold about equally many of values'
// hashes: the first cut at the hash a slice's share of them in, and so on. With fewer
// distinct hashes than slices, some slices hold none. The result depends only on the set of
// values, not their order or repetitions; with no values it is the zero Layout.
func QuantileLayout(values []string) Layout {
	hashes := make([]uint64, len(values))
	for i, v := range values {
		hashes[i] = Hash(v)
	}
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	var cuts [Slices - 1]uint64
	prev := uint64(0)
	for i := range cuts {
		cut := uint64(i+1) << sliceShift // equal cuts where there are no values
		if n := len(hashes); n > 0 {
			cut = hashes[(i+1)*n/Slices]
		}
		// Strictly increasing, leaving room for the cuts after this one.
		cut = min(max(cut, prev+1), math.MaxUint64-uint64(len(cuts)-1-i))
		cuts[i], prev = cut, cut
	}
	return layoutOf(&cuts)
}

// layoutOf is the Layout of cuts, which must be strictly increasing and above 0: the zero
// Layout when they are the equal slices' cuts.
func layoutOf(cuts *[Slices - 1]uint64) Layout {
	equal := true
	b := make([]byte, 0, cutBytes)
	for i, c := range cuts {
		equal = equal && c == uint64(i+1)<<sliceShift
		b = append(b, byte(c>>56), byte(c>>48), byte(c>>40), byte(c>>32), byte(c>>24), byte(c>>16), byte(c>>8), byte(c))
	}
	if equal {
		return Layout{}
	}
	return Layout{cuts: unique.Make(string(b))}
}

// IsZero reports whether l is the zero Layout: equal slices.
func (l Layout) IsZero() bool { return l == Layout{} }

// cut is where slice i starts (i < Slices); cut(0) = 0.
func (l Layout) cut(i int) uint64 {
	switch {
	case i == 0:
		return 0
	case l.IsZero():
		return uint64(i) << sliceShift
	}
	return word(l.cuts.Value(), i-1)
}

// word is the big-endian uint64 at word i of s, read without copying s.
func word(s string, i int) uint64 {
	s = s[i*8 : i*8+8]
	return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
		uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
}

// SliceOf is the slice a hash falls in: a binary search of the cuts, allocating nothing.
func (l Layout) SliceOf(hash uint64) int {
	if l.IsZero() {
		return int(hash >> sliceShift)
	}
	s := l.cuts.Value()
	lo, hi := 0, Slices-1 // the first cut above hash is in [lo, hi]; none: Slices-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if word(s, mid) > hash {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// bound is the shardSelector literal of where slice i starts: "0x" and 16 hex digits, or
// "0x10000000000000000" (2^64) for i = Slices.
func (l Layout) bound(i int) string {
	if i >= Slices {
		return "0x10000000000000000"
	}
	return fmt.Sprintf("0x%016x", l.cut(i))
}
