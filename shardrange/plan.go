package shardrange

import (
	"slices"
	"strings"

	"github.com/jsinformer/jsinformer/sharding"
)

// Plan is one ring's agreed partition of the hash space: the namespace Layout and the owner
// of each of the Slices slices. The lowest member of the ring computes it (NewPlan) and
// publishes it (Encode, in its Lease); every member adopts the ring only with that plan
// (DecodePlan), so all of them place keys and cut caches alike. A Plan is immutable and safe
// for concurrent use.
//
// By namespace the slices are the Layout's; by uid they are equal slices with the same
// owners, which is why the plan evens out slice counts as well as namespaces.
type Plan struct {
	ring   sharding.Ring
	layout Layout
	owners [Slices]int32 // index in ring; -1 only when the ring is empty
}

// NewPlan is the plan of ring for namespaces (order and repetitions do not matter), computed
// to move little from prev, the plan in effect before (nil: none; its ring may differ).
//
// Layout: prev's, unless prev is nil or, under prev's cuts, one slice holds more than
// max(2, 2·⌈n/Slices⌉) of the n namespaces: then QuantileLayout(namespaces).
//
// Owners are balanced by namespace count, the weight of a slice being the namespaces whose
// hash falls in it: no member holds more than ⌈n/N⌉ + (the heaviest slice's weight − 1),
// and, as far as slices holding no namespace allow, members' slice counts differ by at most 1
// (uid partitions use the same owners over equal slices). Within that, slices stay with
// prev's owner while it is in the ring (under a new layout: the prev owner of most of the
// slice's namespaces, or of where the slice starts), so a member joining takes about
// 1/(N+1) of the namespaces and a member leaving moves only its own. Fresh owners get
// contiguous runs of slices (short selectors). The result is a function of the arguments.
func NewPlan(ring sharding.Ring, namespaces []string, prev *Plan) *Plan {
	names := slices.Clone(namespaces)
	slices.Sort(names)
	names = slices.Compact(names)
	hashes := make([]uint64, len(names))
	for i, ns := range names {
		hashes[i] = Hash(ns)
	}
	slices.Sort(hashes)
	p := &Plan{ring: slices.Clone(ring), layout: chooseLayout(names, hashes, prev)}
	if len(ring) == 0 {
		for i := range p.owners {
			p.owners[i] = -1
		}
		return p
	}
	w := weights(p.layout, hashes)
	p.owners = balance(w, startOwners(p.ring, p.layout, hashes, prev), len(ring))
	return p
}

// chooseLayout keeps prev's layout while it spreads the namespaces (sorted hashes) well.
func chooseLayout(names []string, hashes []uint64, prev *Plan) Layout {
	if prev != nil {
		heaviest := 0
		for _, n := range weights(prev.layout, hashes) {
			heaviest = max(heaviest, n)
		}
		if heaviest <= max(2, 2*ceilDiv(len(hashes), Slices)) {
			return prev.layout
		}
	}
	return QuantileLayout(names)
}

// weights counts the hashes in each slice of layout.
func weights(layout Layout, hashes []uint64) [Slices]int {
	var w [Slices]int
	for _, h := range hashes {
		w[layout.SliceOf(h)]++
	}
	return w
}

// startOwners is, per slice of layout, the index in ring of prev's owner, -1 where there is
// none in ring. Under another layout than prev's: the prev owner most of the slice's
// namespaces had (ties: the lowest index), else the prev owner of where the slice starts.
func startOwners(ring sharding.Ring, layout Layout, hashes []uint64, prev *Plan) [Slices]int32 {
	var start [Slices]int32
	for i := range start {
		start[i] = -1
		if prev != nil {
			start[i] = memberIndex(ring, prev.Owner(prev.layout.SliceOf(layout.cut(i))))
		}
	}
	if prev == nil || layout == prev.layout {
		return start
	}
	for lo := 0; lo < len(hashes); {
		s := layout.SliceOf(hashes[lo])
		hi := lo
		votes := map[int32]int{}
		for ; hi < len(hashes) && layout.SliceOf(hashes[hi]) == s; hi++ {
			votes[memberIndex(ring, prev.Owner(prev.layout.SliceOf(hashes[hi])))]++
		}
		best, most := int32(-1), 0
		for m, n := range votes {
			if m >= 0 && (n > most || n == most && m < best) {
				best, most = m, n
			}
		}
		if best >= 0 {
			start[s] = best
		}
		lo = hi
	}
	return start
}

// memberIndex is member's index in ring, -1 if it is not a member.
func memberIndex(ring sharding.Ring, member string) int32 {
	i, ok := slices.BinarySearch(ring, member)
	if !ok || member == "" {
		return -1
	}
	return int32(i)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Ring is the plan's ring (sorted member identities); the caller must not modify it.
func (p *Plan) Ring() sharding.Ring { return p.ring }

// Layout cuts the namespace hash space into the plan's slices.
func (p *Plan) Layout() Layout { return p.layout }

// Owner is the member owning slice (0 ≤ slice < Slices), "" for an empty ring.
func (p *Plan) Owner(slice int) string {
	if slice < 0 || slice >= Slices || p.owners[slice] < 0 {
		return ""
	}
	return p.ring[p.owners[slice]]
}

// Partition is what member caches of field: by namespace the plan's layout, by uid equal
// slices, and the slices the plan gives member (none for a stranger to the ring).
func (p *Plan) Partition(member string, field Field) Partition {
	out := Partition{Field: field}
	if field == Namespace {
		out.Layout = p.layout
	}
	m := memberIndex(p.ring, member)
	for i, o := range p.owners {
		if o >= 0 && o == m {
			out.Mask = out.Mask.With(i)
		}
	}
	return out
}

// KeyOwner is the member handling key: a UIDKey on the owner of its uid's equal slice, an object's or a reconcile key "ns/name" (ns without ':') on ns's slice
// of the plan's layout; either way the member whose Partition caches the object. Any other
// key (a cluster-scoped object's "name", "schedule:…", "metric:…") and any key of an empty
// ring: ok false, the caller places it by rendezvous (sharding.Ring.Owner).
func (p *Plan) KeyOwner(key string) (owner string, ok bool) {
	if len(p.ring) == 0 {
		return "", false
	}
	if uid, found := strings.CutPrefix(key, uidPrefix); found {
		return p.Owner(SliceOf(Hash(uid))), true
	}
	ns, _, found := strings.Cut(key, "/")
	if !found || strings.Contains(ns, ":") {
		return "", false
	}
	return p.Owner(p.layout.SliceOf(Hash(ns))), true
}

// Equal reports whether p and o are the same plan: ring, layout and owners.
func (p *Plan) Equal(o *Plan) bool {
	return p.ring.Equal(o.ring) && p.layout == o.layout && p.owners == o.owners
}

// Moved counts the namespaces whose owner differs between plans a and b.
func Moved(a, b *Plan, namespaces []string) int {
	n := 0
	for _, ns := range namespaces {
		h := Hash(ns)
		if a.Owner(a.layout.SliceOf(h)) != b.Owner(b.layout.SliceOf(h)) {
			n++
		}
	}
	return n
}
