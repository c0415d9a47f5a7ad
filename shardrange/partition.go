package shardrange

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Slices is how many equal slices the 2^64 hash space is cut into: slice i holds the hashes
// [i·2^56, (i+1)·2^56).
const Slices = 256

// sliceShift maps a hash to its slice: hash >> sliceShift.
const sliceShift = 64 - 8

// Mask is a set of slices: slice i is in it when bit i%64 of word i/64 is set. Comparable.
type Mask [Slices / 64]uint64

// All is the mask of every slice.
var All = Mask{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

// Has reports whether slice i is in m.
func (m Mask) Has(i int) bool { return m[i>>6]>>(i&63)&1 == 1 }

// With returns m with slice i added.
func (m Mask) With(i int) Mask {
	m[i>>6] |= 1 << (i & 63)
	return m
}

// Or is the union of m and o.
func (m Mask) Or(o Mask) Mask {
	for i := range m {
		m[i] |= o[i]
	}
	return m
}

// Covers reports whether every slice of o is in m.
func (m Mask) Covers(o Mask) bool {
	for i := range m {
		if o[i]&^m[i] != 0 {
			return false
		}
	}
	return true
}

// Count is how many slices m holds.
func (m Mask) Count() int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

// Field is the object field hashed, spelt as the API server's shardSelector spells it.
type Field string

const (
	// Namespace partitions by metadata.namespace: a namespace's objects stay together. Every
	// cluster-scoped object has the namespace "" and so falls in one slice.
	Namespace Field = "object.metadata.namespace"
	// UID partitions by metadata.uid: objects spread evenly, but a namespace is split.
	UID Field = "object.metadata.uid"
)

// ParseField reads a field by its short name, "namespace" or "uid".
func ParseField(name string) (Field, error) {
	switch name {
	case "namespace":
		return Namespace, nil
	case "uid":
		return UID, nil
	}
	return "", fmt.Errorf("parse shard field %q: want \"namespace\" or \"uid\"", name)
}

// Short is the field's short name, "namespace" or "uid".
func (f Field) Short() string { return strings.TrimPrefix(string(f), "object.metadata.") }

// Partition is the part of the hash space of Field that one replica caches: slice i is in it
// when Mask has it. The zero Partition partitions nothing (every object is kept and
// no selector is sent); a Partition with a Field and an empty Mask keeps nothing.
type Partition struct {
	Field Field
	Mask  Mask
	// Layout cuts the slices; the zero Layout: equal slices.
	Layout Layout
}

// IsZero reports whether p is the zero Partition: no partitioning.
func (p Partition) IsZero() bool { return p.Field == "" && p.Mask == (Mask{}) }

// Full reports whether p keeps every object (the zero Partition, or every slice).
func (p Partition) Full() bool { return p.IsZero() || p.Mask == All }

// Validate reports whether p can be served: no partitioning, or a known field and at least
// one slice (an empty range cannot be written as a shardSelector).
func (p Partition) Validate() error {
	if p.IsZero() {
		return nil
	}
	if p.Field != Namespace && p.Field != UID {
		return fmt.Errorf("validate partition: field %q is neither %s nor %s", p.Field, Namespace, UID)
	}
	if p.Mask == (Mask{}) {
		return fmt.Errorf("validate partition: no slice of %s is owned", p.Field.Short())
	}
	return nil
}

// Hash is the API server's shard hash of a field's value: 64-bit FNV-1a of its bytes
// (apimachinery's sharding.HashField, as a number and without allocating).
func Hash(value string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(value); i++ {
		h ^= uint64(value[i])
		h *= 1099511628211
	}
	return h
}

// SliceOf is the equal slice a hash falls in (the zero Layout's).
func SliceOf(hash uint64) int { return int(hash >> sliceShift) }

// Contains reports whether the hash falls in one of p's slices (always, for a full p).
func (p Partition) Contains(hash uint64) bool {
	return p.Full() || p.Mask.Has(p.Layout.SliceOf(hash))
}

// Value is obj's value of p's field ("" when it has none, as for a cluster-scoped object's
// namespace). obj is an unstructured object's content.
func (p Partition) Value(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	v, _ := meta[p.Field.Short()].(string)
	return v
}

// Keeps reports whether obj (an unstructured object's content) is in p: the API server's
// verdict for the selector p renders.
func (p Partition) Keeps(obj map[string]any) bool {
	return p.Full() || p.Contains(Hash(p.Value(obj)))
}

// KeepsObject is Keeps for an unstructured object.
func (p Partition) KeepsObject(u *unstructured.Unstructured) bool { return p.Keeps(u.Object) }

// Count is how many slices p holds.
func (p Partition) Count() int {
	if p.IsZero() {
		return Slices
	}
	return p.Mask.Count()
}

// String describes p for status pages: "namespace slices 0-63,80-95 of 256", "none".
func (p Partition) String() string {
	if p.IsZero() {
		return "none"
	}
	parts := make([]string, 0, 4)
	for _, r := range p.Ranges() {
		if r.Hi-r.Lo == 1 {
			parts = append(parts, strconv.Itoa(r.Lo))
		} else {
			parts = append(parts, strconv.Itoa(r.Lo)+"-"+strconv.Itoa(r.Hi-1))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none")
	}
	return fmt.Sprintf("%s slices %s of %d", p.Field.Short(), strings.Join(parts, ","), Slices)
}
