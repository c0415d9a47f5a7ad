package inspection

import "time"

// The views of the live versions' work and caches: the answers of Queue, Cache, Indexes and
// IndexSummaries.

// QueueView is the answer of Queue.
type QueueView struct {
	Scripts []ScriptQueue `json:"scripts"`
}

// ScriptQueue is one live version's work: events waiting for its handler worker, the call it
// is running, and its reconcile keys.
type ScriptQueue struct {
	Script  string `json:"script"`
	Version string `json:"version"`
	State   string `json:"state"`
	Paused  bool   `json:"paused"`
	// Backlog is the number of events queued for the handler worker (index stage included).
	Backlog   int           `json:"backlog"`
	InFlight  *CallInFlight `json:"inFlight,omitempty"`
	Reconcile bool          `json:"reconcile"`
	Keys      []KeyState    `json:"keys"` // reconcile keys queued, waiting to retry, or running
	// Dropped are the last keys given up on after maxRetries failures, newest first (at most
	// DroppedKeys per version): a key leaves Keys then, and would otherwise leave no trace.
	Dropped []DroppedKey `json:"dropped,omitempty"`
}

// DroppedKeys is how many dropped keys a version remembers.
const DroppedKeys = 50

// DroppedKey is a reconcile key given up on after its last failure.
type DroppedKey struct {
	Key       string    `json:"key"`
	Dropped   time.Time `json:"dropped"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"lastError"`
}

// CallInFlight is a handler call running now.
type CallInFlight struct {
	Handler   string    `json:"handler"`
	Resource  string    `json:"resource,omitempty"`
	Object    string    `json:"object"`
	Started   time.Time `json:"started"`
	ElapsedMs float64   `json:"elapsedMs"`
}

// KeyState is one reconcile key as the queue view shows it.
type KeyState struct {
	Key string `json:"key"`
	// Reason is why it was last queued: "add of apps/v1/deployments ns/x" (the object's own
	// event), "owner of ...", "watch.enqueue of ...", "ctx.enqueue in onUpdate of ...",
	// "ctx.enqueue in schedule", "requeueAfter 30s", "retry after error", "retry (debug API)".
	Reason      string    `json:"reason"`
	FirstQueued time.Time `json:"firstQueued"`
	// Attempts is how many runs of the key failed in a row (0 before the first failure).
	Attempts int `json:"attempts"`
	// NextRetry is when a failed or requeued key runs again. For a failure it is the default
	// controller backoff (5ms·2^attempts, at most 1000s): an estimate, the queue's token bucket
	// can delay it further under a burst.
	NextRetry    *time.Time `json:"nextRetry,omitempty"`
	LastError    string     `json:"lastError,omitempty"`
	Running      bool       `json:"running"`
	RunningForMs float64    `json:"runningForMs,omitempty"`
}

// CacheView is the answer of Cache: what each script's ctx.cache holds of a resource.
type CacheView struct {
	Resource string         `json:"resource"`
	Objects  []CachedObject `json:"objects"`
}

// CachedObject is one object in one script version's cache. Object is set when one object was
// asked for (Secret data redacted).
type CachedObject struct {
	Script          string         `json:"script"`
	Version         string         `json:"version"`
	Key             string         `json:"key"`
	ResourceVersion string         `json:"resourceVersion,omitempty"`
	Object          map[string]any `json:"object,omitempty"`
}

// IndexQuery selects the objects one script's index function filed under a value.
type IndexQuery struct {
	Script, Index, Value string
}

// IndexesView is the answer of Indexes.
type IndexesView struct {
	Resource string          `json:"resource"`
	Object   string          `json:"object"`
	Scripts  []ScriptIndexes `json:"scripts"`
}

// ScriptIndexes is what one script version's index functions computed for the object: index
// name to values. An index the object is not filed under (no values, or the function threw)
// has an empty list.
type ScriptIndexes struct {
	Script  string              `json:"script"`
	Version string              `json:"version"`
	Cached  bool                `json:"cached"`
	Values  map[string][]string `json:"values"`
}

// IndexSummaryValues bounds how many values per index IndexSummary lists (the most used).
const IndexSummaryValues = 100

// IndexSummary is one script version's index functions and what they filed.
type IndexSummary struct {
	Script  string `json:"script"`
	Version string `json:"version"`
	// Resources are the resources it watches (canonical), for Cache's index query.
	Resources []string      `json:"resources"`
	Indexes   []IndexDigest `json:"indexes"`
}

// IndexDigest is one index: how many distinct values it holds and the most used of them with
// how many objects each names.
type IndexDigest struct {
	Name      string       `json:"name"`
	Distinct  int          `json:"distinct"`
	Values    []ValueCount `json:"values"` // most objects first, at most IndexSummaryValues
	Truncated bool         `json:"truncated,omitempty"`
}

// ValueCount is one index value and how many objects are filed under it.
type ValueCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}
