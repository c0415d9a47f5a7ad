package engine

import "time"

// The shapes the inspection methods return. They are the JSON of the debug API (package
// debugapi) and of `runner ... -o json`: field names are a contract (docs/debugging.md), so
// fields are added, never renamed or removed.

// TraceRecord is one thing that happened to one object in one script version: an event
// delivered to its worker (with the handler it called, if any), a reconcile run of its key,
// or a replay asked for through the debug API.
type TraceRecord struct {
	Seq      uint64    `json:"seq"` // increasing over the runner's life; tail resumes after it
	Time     time.Time `json:"time"`
	Script   string    `json:"script"`
	Version  string    `json:"version"`
	Resource string    `json:"resource"` // canonical: apps/v1/deployments
	Object   string    `json:"object"`   // namespace/name, or name when cluster-scoped
	// Event is add, update, delete, reconcile or replay.
	Event             string `json:"event"`
	Initial           bool   `json:"initial,omitempty"`
	FinalStateUnknown bool   `json:"finalStateUnknown,omitempty"`
	ResourceVersion   string `json:"resourceVersion,omitempty"`
	// Handler is the function called: onAdd, onUpdate, onDelete, reconcile; empty when the
	// script defines none for this event (the event still updated its cache).
	Handler    string  `json:"handler,omitempty"`
	DurationMs float64 `json:"durationMs"`
	// Result is ok, error, timeout, not called (no handler, standby, not leading, another
	// replica's key) or paused.
	Result string `json:"result"`
	// Owner is the replica that owns the key when this sharded runner did not call the handler
	// because the key is another's (--sharded).
	Owner    string     `json:"owner,omitempty"`
	Error    string     `json:"error,omitempty"`
	Attempt  int        `json:"attempt,omitempty"` // reconcile: 1 for the first run of a key
	Logs     []LogLine  `json:"logs,omitempty"`
	Writes   []APIWrite `json:"writes,omitempty"`
	Enqueued []string   `json:"enqueued,omitempty"` // reconcile keys this call enqueued
	// Truncated counts log lines and writes not kept (TraceLogsPerCall, TraceWritesPerCall).
	Truncated int `json:"truncated,omitempty"`
}

// LogLine is one console.* or log.* output of a handler call, as the log shows it.
type LogLine struct {
	Time    time.Time      `json:"time"`
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Attrs   map[string]any `json:"attrs,omitempty"`
}

// APIWrite is one write a handler sent to the API server. Code is the HTTP status (0 when no
// answer came: a transport error or a request refused before it was sent).
type APIWrite struct {
	Verb      string `json:"verb"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	DryRun    bool   `json:"dryRun,omitempty"`
	Code      int    `json:"code"`
	Error     string `json:"error,omitempty"`
}

// Delivery says whether one script version is shown an object, and if not, why.
type Delivery struct {
	Script  string `json:"script"`
	Version string `json:"version,omitempty"`
	State   string `json:"state"` // the version's state: syncing, current, draining; or stopped, failed, not loaded
	// Delivered: the object passes one of the script's watches on this resource.
	Delivered bool `json:"delivered"`
	// Reason, when not delivered: not watched, namespace, selector, field selector, syncing,
	// stopped (by the memory guard), not loaded (failed or waiting); with Detail saying which.
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Watch is the watch that delivers it, or the closest that does not.
	Watch *WatchView `json:"watch,omitempty"`
	// Cached: the script's own cache (ctx.cache) holds the object.
	Cached bool `json:"cached"`
}

// WatchView is one resolved watch of a script version.
type WatchView struct {
	Resource      string `json:"resource"`
	Namespace     string `json:"namespace,omitempty"` // empty: all namespaces, or cluster-scoped
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	Enqueue       string `json:"enqueue,omitempty"` // reconcile scripts: self, owner, function, none
}

// Explanation is the answer of Explain: the object as the server has it now, whether each
// script is shown it, and the last trace records about it, oldest first.
type Explanation struct {
	Resource   string         `json:"resource"`
	Object     string         `json:"object"`
	Exists     bool           `json:"exists"` // on the server at the time of the question
	Current    map[string]any `json:"current,omitempty"`
	Deliveries []Delivery     `json:"deliveries"`
	Records    []TraceRecord  `json:"records"`
	// Dropped: older records of this object are gone (per-object or overall cap).
	Dropped bool `json:"dropped,omitempty"`
	// Recording is false when the runner records no traces (--trace-records 0).
	Recording bool `json:"recording"`
	// Owner is the replica whose handlers and reconciles run for this key, with --sharded
	// (empty otherwise); Self is this runner's identity.
	Owner string `json:"owner,omitempty"`
	Self  string `json:"self,omitempty"`
}
