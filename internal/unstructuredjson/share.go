package unstructuredjson

import (
	"hash/maphash"
	"math"
	"reflect"
)

// Whole subtrees repeat across objects, not only strings: the resources, ports, probes and
// rollout strategy of every Deployment of a service, the default tolerations and security
// contexts of every Pod, the empty maps the apiserver fills in. A decoder shares equal
// subtrees: a map or array whose members are all scalars or shared subtrees, and few
// enough to compare cheaply, is looked up by a hash of its content in a direct-mapped table
// before it is allocated, and an equal one found there is returned instead (and else the new
// one is put there). A Go map costs about 300 bytes however few members it holds, so a
// shared one saves that, its members' boxes and an allocation per object it repeats in.
//
// Results are equal either way (reflect.DeepEqual, and down to the sign of a zero); they
// may share memory with each other, which callers must treat as immutable, as informer
// caches are. Maps with a role in the document (a root object, and its metadata when
// managedFields are dropped) are never shared: they are unique to an object, and may be
// changed by a caller before they are cached.
const (
	shareSlots = 4096 // a power of two
	maxShared  = 16   // members of the largest map or array looked up
)

// shareTable is a decoder's direct-mapped table of shared subtrees by content hash. A slot
// holds the last subtree hashed to it.
type shareTable [shareSlots]struct {
	hash uint64
	v    any // a map[string]any or a []any
}

// Value hashes: a scalar's is derived from its JSON text (equal values with different
// texts, 1e3 and 1000.0, just miss each other), a shared subtree's from its members.
const (
	hashNull  = 0x9e3779b97f4a7c15
	hashTrue  = 0xc2b2ae3d27d4eb4f
	hashFalse = 0x165667b19e3779f9
	hashNum   = 0x27d4eb2f165667c5 // mixed into a number's text hash: "1" is not "\"1\""
)

// mix is a 64-bit finalizer (splitmix64's): it spreads a combination of hashes over all
// bits, so that summing the members' hashes (order-independent, as maps are) stays sound.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

func hashBytes(b []byte) uint64 { return maphash.Bytes(valueSeed, b) }

// memberHash is the hash of one "key": value of a map.
func memberHash(key, value uint64) uint64 { return mix(key ^ (value*0x9e3779b97f4a7c15 + 1)) }

// sharedMap returns the shared map equal to the members ps, whose hash is h, if the table
// holds one.
func (d *decoder) sharedMap(ps []pair, h uint64) (map[string]any, bool) {
	slot := &d.shares[h&(shareSlots-1)]
	m, ok := slot.v.(map[string]any)
	if !ok || slot.hash != h || len(m) != len(ps) { // repeated keys never match
		return nil, false
	}
	for _, p := range ps {
		if v, ok := m[p.key]; !ok || !same(v, p.val) {
			return nil, false
		}
	}
	return m, true
}

// sharedArray returns the shared array equal to the elements es, whose hash is h, if the
// table holds one.
func (d *decoder) sharedArray(es []any, h uint64) ([]any, bool) {
	slot := &d.shares[h&(shareSlots-1)]
	a, ok := slot.v.([]any)
	if !ok || slot.hash != h || len(a) != len(es) {
		return nil, false
	}
	for i := range es {
		if !same(a[i], es[i]) {
			return nil, false
		}
	}
	return a, true
}

func (d *decoder) share(h uint64, v any) {
	slot := &d.shares[h&(shareSlots-1)]
	slot.hash, slot.v = h, v
}

// same reports whether two decoded values are equal, with their Go types, and floats bit
// for bit (a zero keeps its sign). Shared subtrees are mostly the same subtree, which is
// checked first.
func same(a, b any) bool {
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b
	case int64:
		b, ok := b.(int64)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case nil:
		return b == nil
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && sameMap(a, b)
	case []any:
		b, ok := b.([]any)
		return ok && sameArray(a, b)
	}
	return false
}

func sameMap(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	if reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() {
		return true
	}
	for k, va := range a {
		if vb, ok := b[k]; !ok || !same(va, vb) {
			return false
		}
	}
	return true
}

func sameArray(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if !same(a[i], b[i]) {
			return false
		}
	}
	return true
}
