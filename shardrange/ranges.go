package shardrange

import (
	"fmt"
	"strings"
)

// Range is a run of contiguous slices [Lo, Hi), 0 ≤ Lo < Hi ≤ Slices, of a Layout.
type Range struct {
	Lo, Hi int
	Layout Layout
}

// Start is the range's first hash as the shardSelector writes it: "0x" and 16 hex digits.
func (r Range) Start() string { return r.Layout.bound(r.Lo) }

// End is the range's exclusive end: 16 hex digits, or "0x10000000000000000" (2^64) for the
// last slice.
func (r Range) End() string { return r.Layout.bound(r.Hi) }

// Ranges merges p's slices into contiguous ranges, in order; none for the zero Partition.
func (p Partition) Ranges() []Range {
	if p.IsZero() {
		return nil
	}
	var out []Range
	for i := 0; i < Slices; i++ {
		if !p.Mask.Has(i) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Hi == i {
			out[n-1].Hi = i + 1
		} else {
			out = append(out, Range{Lo: i, Hi: i + 1, Layout: p.Layout})
		}
	}
	return out
}

// Selector is the shardSelector of p: one shardRange clause per range, joined by " || ",
// written exactly as the API server writes the selector it applied in ListMeta.shardInfo.
// It is "" when p keeps everything (no selector is sent) or nothing (no selector can say so:
// Validate refuses such a p).
func (p Partition) Selector() string {
	if p.Full() {
		return ""
	}
	ranges := p.Ranges()
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = fmt.Sprintf("shardRange(%s, '%s', '%s')", p.Field, r.Start(), r.End())
	}
	return strings.Join(parts, " || ")
}
