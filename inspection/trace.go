package inspection

import "time"

const (
	// DefaultTraceRecords is the overall cap on trace records kept in memory.
	DefaultTraceRecords = 10000
	// TracePerObject is the most records kept per object (Explain's default shows them all).
	TracePerObject = 20
	// TraceLogsPerCall bounds the log lines one record keeps of a call's output.
	TraceLogsPerCall = 20
	// TraceWritesPerCall bounds the API writes (and the enqueued keys) one record keeps of a
	// call.
	TraceWritesPerCall = 20
)

// TraceRecord is one thing that happened to one object in one script version: an event
// delivered to its worker (with the handler it called, if any), a reconcile run of its key,
// a replay asked for through the debug API, or an admission request its validate or mutate
// answered (Event "admission", Admission set).
type TraceRecord struct {
	Seq      uint64    `json:"seq"` // increasing over the runner's life; tail resumes after it
	Time     time.Time `json:"time"`
	Script   string    `json:"script"`
	Version  string    `json:"version"`
	Resource string    `json:"resource"` // canonical: apps/v1/deployments
	Object   string    `json:"object"`   // namespace/name, or name when cluster-scoped
	// Event is add, update, delete, reconcile, replay, admission or deliver (an outbox
	// message's delivery, filed under the object it is about).
	Event             string `json:"event"`
	Initial           bool   `json:"initial,omitempty"`
	FinalStateUnknown bool   `json:"finalStateUnknown,omitempty"`
	ResourceVersion   string `json:"resourceVersion,omitempty"`
	// Handler is the function called: onAdd, onUpdate, onDelete, reconcile, validate, mutate;
	// empty when the script defines none for this event (the event still updated its cache).
	Handler    string  `json:"handler,omitempty"`
	DurationMs float64 `json:"durationMs"`
	// Result is ok, error, timeout, not called (no handler, standby, not leading, another
	// replica's key) or paused; for an admission record, its outcome: allowed, denied, warned,
	// audited or errored.
	Result string `json:"result"`
	// Owner is the replica that owns the key when this sharded runner did not call the handler
	// because the key is another's (--sharded).
	Owner   string     `json:"owner,omitempty"`
	Error   string     `json:"error,omitempty"`
	Attempt int        `json:"attempt,omitempty"` // reconcile, deliver: 1 for the first run of a key
	Logs    []LogLine  `json:"logs,omitempty"`
	Writes  []APIWrite `json:"writes,omitempty"`
	// Requests are the fetch requests the call made, next to its writes.
	Requests []HTTPRequest `json:"requests,omitempty"`
	// Store are the ctx.store calls the call made (counted with the writes' limit).
	Store    []StoreOp `json:"store,omitempty"`
	Enqueued []string  `json:"enqueued,omitempty"` // reconcile keys this call enqueued
	// Truncated counts log lines and writes not kept (TraceLogsPerCall, TraceWritesPerCall).
	Truncated int `json:"truncated,omitempty"`
	// Admission is the decision of an admission record (Event "admission"), nil otherwise.
	Admission *AdmissionDecision `json:"admission,omitempty"`
}

// AdmissionPatchChars bounds the JSON Patch an admission record keeps (the rest is cut, with
// "…" at the end); a denial's message and warnings are bounded the same way.
const AdmissionPatchChars = 4000

// AdmissionDecision is what a script's validate or mutate answered to one admission request,
// as the API server was told (the record's Result is its outcome, DurationMs the time from
// the request received to the answer decided, Error the script's error when it errored).
type AdmissionDecision struct {
	Webhook     string `json:"webhook"`   // validate or mutate
	Operation   string `json:"operation"` // CREATE, UPDATE, DELETE, CONNECT
	Subresource string `json:"subresource,omitempty"`
	// User is who asked the API server: the request's userInfo.username.
	User    string `json:"user"`
	DryRun  bool   `json:"dryRun,omitempty"`
	Allowed bool   `json:"allowed"`
	Code    int32  `json:"code,omitempty"` // the HTTP status of a denial
	// Message is a denial's message (for a warned or audited one, the message it would have
	// had; for an audited mutation, the patch it would have applied).
	Message  string   `json:"message,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Patch    string   `json:"patch,omitempty"` // the JSON Patch applied, at most AdmissionPatchChars
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

// HTTPRequest is one fetch request a handler made: never its query, headers or bodies, which
// may carry credentials. Status is 0 when no response came; Error is then its kind (refused,
// timeout, body_too_large, dns, tls, canceled, other).
type HTTPRequest struct {
	Method     string  `json:"method"`
	Host       string  `json:"host"`
	Path       string  `json:"path"`
	Status     int     `json:"status"`
	DurationMs float64 `json:"durationMs"`
	Bytes      int64   `json:"bytes"`
	Error      string  `json:"error,omitempty"`
}

// StoreValueChars bounds the value a StoreOp keeps of a readable key (the rest is cut, with
// "…" at the end).
const StoreValueChars = 1000

// StoreOp is one ctx.store call a handler made: its key, size and version, never the value of
// a key the script has not marked readable (the definition's store.readable).
type StoreOp struct {
	Op     string `json:"op"`               // get, set, delete, list
	Shared string `json:"shared,omitempty"` // the shared namespace; empty: the script's own store
	Key    string `json:"key"`              // list: the prefix
	// Found: get found the key, delete removed one. Count: list's entries.
	Found   bool  `json:"found,omitempty"`
	Count   int   `json:"count,omitempty"`
	Bytes   int   `json:"bytes"`             // the value's JSON (list: all the values')
	Version int64 `json:"version,omitempty"` // what get read or set wrote
	// Value is the value's JSON, only when the key is readable.
	Value string `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

// TailFilter selects the records a subscriber gets; empty fields match everything. Resource
// may be spelled as users do when asked of the engine (it resolves it).
type TailFilter struct {
	Script   string
	Resource string
	Object   string // namespace/name
}

// Matches reports whether r passes f (f.Resource in canonical spelling).
func (f TailFilter) Matches(r TraceRecord) bool {
	return (f.Script == "" || f.Script == r.Script) &&
		(f.Resource == "" || f.Resource == r.Resource) &&
		(f.Object == "" || f.Object == r.Object)
}

// Subscription receives the records recorded after it started that its filter selects, in
// recording order. Its owner reads Records from one goroutine and calls Close when done.
type Subscription interface {
	// Records delivers the records; it is never closed.
	Records() <-chan TraceRecord
	// Missed is how many records were skipped so far because Records was not read fast
	// enough.
	Missed() int64
	// Close ends the subscription; idempotent.
	Close()
}
