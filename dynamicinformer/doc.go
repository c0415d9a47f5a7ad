// Package dynamicinformer shares client-go dynamic informers between many users and resolves
// resource names the way kubectl does. It knows nothing of JavaScript.
//
// Factory hands out informers keyed by (GVR, namespace, label selector, field selector): every
// Acquire of an equal Key returns a handle on the same running informer, so one LIST+WATCH
// serves any number of users. Each handle is released once; when the last handle of a key is
// released the informer is stopped and forgotten, and a later Acquire starts a fresh one.
// client-go's own factory can neither stop one informer nor key by selector, hence this.
//
// Every informer strips metadata.managedFields before objects enter its cache (the transform
// must be set before the informer starts, which Factory guarantees). Cached objects are shared
// by all users and must be treated as immutable: equal strings, and equal maps and slices
// inside them (not an object's own map or its metadata), may even be shared between objects.
//
// NewClient is the dynamic client to build a Factory on: client-go's, with its JSON decoding
// (list bodies, watch frames and their objects) done by internal/unstructuredjson, which
// gives client-go's objects without ever allocating managedFields, several times faster,
// and with equal small subtrees shared between objects (cached objects are immutable).
// Whatever that decoder does not reproduce exactly goes to client-go's decoder, so malformed
// responses fail as they do in client-go: a watch decode error is an error event, after which
// the reflector restarts the watch from the last resourceVersion. Any dynamic.Interface works
// with the Factory; this one is what makes it fast. It serves lists and watches only: every
// other request fails with ErrListWatchOnly, since shared subtrees are safe only in a cache
// nobody changes.
//
// Initial lists: by default an informer takes its initial state from one consistent LIST
// (resourceVersion "", no limit: listwatch.go's initialListOptions says why), which
// NewClient's client decodes item by item as the response arrives (listbody.go), never
// holding the body; then it watches from the list's resourceVersion. With
// Options.StreamingLists it uses client-go's streaming list (a watch that sends every object
// first) where the server supports it. A relist after "410 Gone" found by a watch is a
// streaming list either way (watchproxy.go). docs/benchmarks.md measures both. An API server
// with its WatchList feature off refuses streaming lists (422, naming sendInitialEvents): the
// Factory remembers the first refusal, logs it once, and from then on its informers list
// instead without asking again; a refusal is never reported as a failure (streaming.go).
//
// Watch health: each informer's ListerWatcher (listwatch.go) retries failing lists and watches
// itself with a bounded, jittered Backoff, so client-go's reflector, whose backoff grows to a
// minute, never sees a transient failure; and each watch goes through a proxy (watchproxy.go)
// that answers "410 Gone" with a streaming relist diffed against what the informer holds
// (known.go), so the reflector never has to back off before relisting either. Reflector,
// DeltaFIFO and informer semantics are otherwise client-go's. Deletes inferred from such a
// relist reach handlers as the last known object, for which FinalStateUnknown is true.
// A watch whose connection was closed as dead (WithConnectionHealth: an HTTP/2 PING left
// unanswered, as a hung API server leaves it) marks the informer failing and ends quietly, so
// the reflector watches again at once through a new connection.
// Transitions (failing, still failing once per Options.Remind, recovered) go to
// Options.OnHealth, on the informer's goroutines and in order per informer; Health reports
// every informer's state. Goroutines: client-go's informer goroutines, owned by the Factory
// and joined by Shutdown, plus one per open watch, owned by that watch's proxy and ended by
// its Stop or the end of its stream.
//
// Factory methods are safe for concurrent use. Shutdown stops every informer and waits for
// their goroutines; handles released after Shutdown are no-ops.
//
// Partitioned informers (Key.Partition, partition.go) cache only the objects whose 64-bit
// FNV-1a hash of metadata.namespace or metadata.uid falls in the partition's ranges: every
// list and watch carries the partition's shardSelector (KEP-5866); the informer trusts the
// API server to filter once a list echoes it in shardInfo (a one-object probe list before a
// streaming list, whose answer carries none), and drops what is outside the partition itself
// in every case, list items as they are decoded and watch events before the cache. Health
// reports the mode, why, and the objects received and kept.
//
// Resolver maps "apps/v1/deployments", "deployments.v1.apps", "deployments.apps",
// "deployments", "deploy" and custom resources to a Resource, using discovery and a cached
// RESTMapper that is reset on a miss so that CRDs created after start-up resolve. Resets are
// throttled to one per ResetEvery, and a miss is remembered until the next one is due, so a
// misspelt name looked up on every event costs no discovery per event.
package dynamicinformer
