// Package shardrange partitions objects between the replicas of a --sharded runner by the
// hash Kubernetes' server-side sharded list and watch (KEP-5866, the ShardedListAndWatch
// feature) filters on: 64-bit FNV-1a of object.metadata.namespace or object.metadata.uid.
//
// The 2^64 hash space is cut into Slices (256) equal slices; a Partition is a field and the
// set of slices one replica owns (a bit mask, so a Partition is comparable and a membership
// test is one shift). A Plan gives each slice to a ring member, balanced by namespace count.
// Selector renders a partition's slices, merged into contiguous ranges, as the
// shardSelector the API server accepts: shardRange(...) clauses joined by "||", exactly as
// the server renders the selector it applied (ListMeta.shardInfo.selector), so an echo can be
// compared as a string. Keeps filters an object client-side with the same hash over the same
// field, for API servers that ignore the selector.
//
// Slices are equal by default, which suits uids: random UUIDs hash uniformly. Namespace names
// do not: FNV-1a barely carries the last bytes of a short string into its top bits, so
// "team-001" … "team-400" fall into two of 256 equal slices, and half of them on one of four
// replicas. A Layout cut at the namespaces' own hashes (QuantileLayout) gives each slice
// about as many namespaces; replicas must agree on it (see docs/sharding.md). A Layout is a
// comparable value (its cuts interned), so Partitions are too.
//
// # Plan
//
// A Plan is one ring's agreed partition: the namespace Layout and the owner of each slice.
// The lowest member of the ring computes it (NewPlan, from the namespaces that exist and the
// plan in effect before) and writes it (Encode) into its Lease; package sharding and the
// engine adopt a ring only with its plan (DecodePlan), so every member cuts its caches and
// places keys (KeyOwner) alike without computing anything itself. The plan balances owners
// by namespace count, not by slices: under --shard-cache by namespace a replica's load is its
// namespaces' objects, and with rendezvous hashing of each slice one of 4 replicas owns 64 ± 7
// slices, so even with well-spread names it holds about 16 % more namespaces than its share.
// A plan gives no member more than ⌈n/N⌉ + (the heaviest slice's namespaces − 1) of n
// namespaces, evens out slice counts too (uid partitions use the same owners over equal
// slices), moves only what balance needs from the plan before (a member joining takes about
// 1/(N+1) of the namespaces, a member leaving moves only its own), and gives owners
// contiguous runs of slices where it can, so a selector has a few clauses (1 to 5 in a fresh
// plan, at most 20 through 200 random changes in TestPlanHoldsUnderChurn) where rendezvous
// hashing of each slice needed about 48.
//
// Why 256 slices: a slice is the smallest part of the hash space that moves, so more slices
// let a plan even out namespaces (and uids) more finely; the price is the selector, at worst
// one clause per owned slice (the API server's CEL parser takes 128, tested). The skew that
// matters in namespace mode is a large namespace, which no slice count divides.
//
// Everything here is a pure function of its arguments and safe for concurrent use.
package shardrange
