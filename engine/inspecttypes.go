package engine

import (
	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
)

// The shapes the inspection methods return. They are the JSON of the debug API (package
// debugapi) and of `runner ... -o json`: field names are a contract (docs/debugging.md), so
// fields are added, never renamed or removed.

// The trace's shapes are package trace's (engine/internal/trace, the recorder); the engine
// shows them under its own names.
type (
	// TraceRecord is one thing that happened to one object in one script version: an event
	// delivered to its worker (with the handler it called, if any), a reconcile run of its
	// key, or a replay asked for through the debug API.
	TraceRecord = trace.Record
	// LogLine is one console.* or log.* output of a handler call, as the log shows it.
	LogLine = trace.LogLine
	// APIWrite is one write a handler sent to the API server.
	APIWrite = trace.APIWrite
	// TailFilter selects the records a Subscribe subscriber gets; empty fields match everything.
	TailFilter = trace.Filter
	// Subscription receives the records recorded after Subscribe that its filter selects, in
	// recording order. The owner reads Records and calls Close when done.
	Subscription = trace.Subscription
)

// The views' shapes are package inspect's (engine/internal/inspect gathers the views from the
// live versions); the engine shows them under its own names.
type (
	// KeyState is one reconcile key as the queue view shows it (inspect.KeyBook keeps them).
	KeyState = inspect.KeyState
	// QueueView is the answer of Queue.
	QueueView = inspect.QueueView
	// ScriptQueue is one live version's work: events waiting for its handler worker, the
	// call it is running, and its reconcile keys.
	ScriptQueue = inspect.ScriptQueue
	// CallInFlight is a handler call running now.
	CallInFlight = inspect.CallInFlight
	// CacheView is the answer of Cache: what each script's ctx.cache holds of a resource.
	CacheView = inspect.CacheView
	// CachedObject is one object in one script version's cache.
	CachedObject = inspect.CachedObject
	// IndexQuery selects the objects one script's index function filed under a value.
	IndexQuery = inspect.IndexQuery
	// IndexesView is the answer of Indexes.
	IndexesView = inspect.IndexesView
	// ScriptIndexes is what one script version's index functions computed for the object.
	ScriptIndexes = inspect.ScriptIndexes
	// IndexSummary is one script version's index functions and what they filed.
	IndexSummary = inspect.IndexSummary
	// IndexDigest is one index: how many distinct values it holds and the most used.
	IndexDigest = inspect.IndexDigest
	// ValueCount is one index value and how many objects are filed under it.
	ValueCount = inspect.ValueCount
)

// IndexSummaryValues bounds how many values per index IndexSummary lists (the most used).
const IndexSummaryValues = inspect.IndexSummaryValues

const (
	// DefaultTraceRecords is the overall cap on trace records kept in memory.
	DefaultTraceRecords = trace.DefaultRecords
	// TracePerObject is the most records kept per object (Explain's default shows them all).
	TracePerObject = trace.PerObject
	// TraceLogsPerCall bounds the log lines one record keeps of a call's output.
	TraceLogsPerCall = trace.LogsPerCall
	// TraceWritesPerCall bounds the API writes one record keeps of a call.
	TraceWritesPerCall = trace.WritesPerCall
)

// Delivery says whether one script version is shown an object, and if not, why
// (inspect.Judge gives the verdict of one watch).
type Delivery = inspect.Delivery

// WatchView is one resolved watch of a script version.
type WatchView = inspect.WatchView

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
