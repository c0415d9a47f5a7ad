package sharding

import (
	"slices"
	"strconv"
	"strings"
)

// Ring is a set of member identities, sorted. Owner picks a key's member by rendezvous
// (highest random weight) hashing: every member scores the key and the highest score wins, so
// removing a member moves only its keys and adding one takes about 1/N of everyone's.
type Ring []string

// NewRing returns the sorted, de-duplicated ring of members.
func NewRing(members ...string) Ring {
	r := slices.Clone(members)
	slices.Sort(r)
	return slices.Compact(r)
}

// Owner returns the member owning key, or "" for an empty ring.
func (r Ring) Owner(key string) string {
	best, owner := uint64(0), ""
	kh := hash64(key)
	for _, m := range r {
		if s := mix(kh ^ hash64(m)); owner == "" || s > best {
			best, owner = s, m
		}
	}
	return owner
}

// Fingerprint names the ring's membership; it is what a member writes in its Lease once it
// has drained to the ring.
func (r Ring) Fingerprint() string {
	if len(r) == 0 {
		return ""
	}
	return strconv.FormatUint(hash64(strings.Join(r, "\n")), 16)
}

// Equal reports whether r and o have the same members.
func (r Ring) Equal(o Ring) bool { return slices.Equal(r, o) }

// Has reports whether id is a member.
func (r Ring) Has(id string) bool {
	_, ok := slices.BinarySearch(r, id)
	return ok
}

// hash64 is FNV-1a, inlined so that hashing a key per event allocates nothing.
func hash64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix is splitmix64's finalizer: FNV alone clusters for keys that differ in their last bytes.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}
