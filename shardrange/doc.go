// Package shardrange partitions objects between the replicas of a --sharded runner by the
// hash Kubernetes' server-side sharded list and watch (KEP-5866, the ShardedListAndWatch
// feature) filters on: 64-bit FNV-1a of object.metadata.namespace or object.metadata.uid.
//
// The 2^64 hash space is cut into Slices (256) equal slices; a Partition is a field and the
// set of slices one replica owns (a bit mask, so a Partition is comparable and a membership
// test is one shift). Assign gives each slice to a ring member by the ring's rendezvous hashing, so a
// membership change moves about 1/N of the slices, only to or from the member that came or
// went. Selector renders a partition's slices, merged into contiguous ranges, as the
// shardSelector the API server accepts: shardRange(...) clauses joined by "||", exactly as
// the server renders the selector it applied (ListMeta.shardInfo.selector), so an echo can be
// compared as a string. Keeps filters an object client-side with the same hash over the same
// field, for API servers that ignore the selector.
//
// Slices are equal by default, which suits uids: random UUIDs hash uniformly. Namespace names
// do not: FNV-1a barely carries the last bytes of a short string into its top bits, so
// "team-001" … "team-400" fall into two of 256 equal slices, and half of them on one of four
// replicas. A Layout cut at the namespaces' own hashes (QuantileLayout) gives each slice
// about as many namespaces; replicas must agree on it (see docs/sharding.md).
//
// Why 256 slices: rendezvous hashing gives each member a binomial share of the slices, so
// fewer slices mean a more uneven load: with 64, one of 4 replicas often owns 24 or more
// (1.5× its share; 28 seen in 200 random rings), with 256 it owns 64 ± 7 (±11 %; 87, 1.36×,
// at worst in 200 random rings). The price
// is the selector: one clause per contiguous run of owned slices, about 48 for one of 4
// replicas (about 3.6 KB of query string, and as many string comparisons per object and
// watcher on the API server), 128 at worst; the API server's CEL parser takes that (tested).
// A membership change moves whole slices, 1/256 of the hash space each. The skew that
// matters in namespace mode is a large namespace, which no slice count divides.
//
// Everything here is a pure function of its arguments and safe for concurrent use.
package shardrange
