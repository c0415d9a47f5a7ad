package trace

import (
	"errors"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// The record shapes are the JSON of the debug API (package debugapi) and of `runner ... -o
// json`, where package engine shows them as TraceRecord, LogLine and APIWrite: field names
// are a contract (docs/debugging.md), so fields are added, never renamed or removed.

// Record is one thing that happened to one object in one script version: an event
// delivered to its worker (with the handler it called, if any), a reconcile run of its key,
// or a replay asked for through the debug API.
type Record struct {
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
	// Truncated counts log lines and writes not kept (LogsPerCall, WritesPerCall).
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

// Finish sets what a call of handler did on r: how long it took and its result (ok, error,
// timeout); nil-safe.
func (r *Record) Finish(handler string, took time.Duration, err error) {
	if r == nil {
		return
	}
	r.Handler, r.DurationMs, r.Result = handler, float64(took.Microseconds())/1000, "ok"
	switch {
	case errors.Is(err, scripting.ErrTimeout):
		r.Result, r.Error = "timeout", err.Error()
	case err != nil:
		r.Result, r.Error = "error", err.Error()
	}
}
