package unstructuredjson

import "hash/maphash"

// Strings in Kubernetes objects repeat: across objects ("IfNotPresent", "TCP", label
// values, images) and within one (a Deployment's name is also its app label, its selector
// and its template's label). A decoder keeps the boxed values of recent strings in a
// direct-mapped cache and hands out the same `any` for the same string, which saves the
// string's bytes and its boxed header for every repetition it catches. Sharing is safe:
// strings are immutable. A slot holds the last string hashed to it, so values seen once (a
// uid, a timestamp) pass through without pinning memory beyond their slot.
const (
	valueSlots  = 4096 // a power of two
	maxValueLen = 64
)

var valueSeed = maphash.MakeSeed()

type valueSlot struct {
	s string
	v any // s, boxed once
}

type valueCache [valueSlots]valueSlot

// value returns b, whose hash is h, as a boxed string, from the cache when it holds it.
func (c *valueCache) value(b []byte, h uint64) any {
	if len(b) > maxValueLen {
		return string(b)
	}
	slot := &c[h&(valueSlots-1)]
	if slot.v != nil && slot.s == string(b) { // no allocation for the comparison
		return slot.v
	}
	s := string(b)
	slot.s, slot.v = s, s
	return slot.v
}
