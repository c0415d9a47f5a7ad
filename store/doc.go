// Package store is ctx.store's backend: a key-value store per script, keys strings and values
// JSON, kept in ConfigMaps in one namespace of the API server so that it needs no component
// of its own and survives restarts, reloads and hand-overs between replicas.
//
// # Layout
//
// A script's keys are sharded by an FNV-1a hash of the key over Options.Shards ConfigMaps
// named jsinformer-store-<script>-<hash>-<shard>, labelled with LabelScript, so that no single
// object's 1 MiB limit bounds the store. Each ConfigMap holds one JSON document (data key
// DataKey): a sequence number and the shard's entries, each with its value, version and
// optional expiry. ConfigMaps rather than a custom resource: nothing to install, RBAC on one
// core kind, and `kubectl get configmap` shows the store's size without a schema.
//
// # Versions and compare-and-set
//
// An entry's version is the shard's sequence number at the write that produced it, so it
// grows with every write and a key deleted and set again never gets an old version back:
// a compare-and-set against a version read before the delete fails. Version 0 means "absent";
// Set or Delete with Expect 0 succeeds only when the key does not exist. A compare-and-set
// whose expected version no longer matches fails with a *ConflictError (errors.Is ErrConflict).
//
// # Writes
//
// Writes to one shard are coalesced: the first write starts a flush goroutine, owned by the
// Store, that waits until Options.Window has passed since the shard's last update (not at all
// when the shard was idle that long), takes every write queued for the shard, reads the
// ConfigMap, applies the writes in order and updates it carrying the resourceVersion it read.
// A stale resourceVersion (another replica wrote) gets Conflict from the API server; the
// flush then reads again and reapplies the same writes, so no write is lost and none
// overwrites another replica's blindly. Each write's call returns only when the update that
// contains it is acknowledged by the API server, or with the error that write got: a failed
// compare-and-set or a limit fails that write alone, the others in its batch still apply.
// A caller whose context ends while its write is queued gets the context's error and the
// write's outcome is unknown (it may still be applied).
//
// # Reads
//
// Get and List read the shard ConfigMaps from the API server (a quorum read), decoding a
// shard again only when its resourceVersion changed. Every write acknowledged to any replica
// is therefore visible to every later read on every replica. Expired entries read as absent
// and are removed from their ConfigMap by the next write to the shard.
//
// # Limits
//
// Limits bound key and value sizes, keys per script and bytes per script (key plus value
// lengths). A write that would exceed one fails alone with a *LimitError; nothing is queued.
// The per-script totals are checked against the fresh state of the written shard plus the
// latest state this Store has seen of the script's other shards (all of them are listed at
// the script's first write), so two replicas writing at once may overshoot them by what they
// write between reads. Separately, a shard whose document would outgrow MaxShardBytes refuses
// the write.
//
// Values never appear in this package's logs or errors; keys, sizes and counts do.
//
// A Store is safe for concurrent use. Close writes what is queued at once and waits for it.
package store
