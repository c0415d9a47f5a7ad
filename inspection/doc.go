// Package inspection is the engine's inspection API: the shapes of the debug views and
// actions (Queue, Cache, Indexes, IndexSummaries, Explain, Replay, the trace and its live
// tail) and the errors they wrap. Package engine answers with these types, package debugapi
// serves them as JSON, and `runner ... -o json` prints them: field names are a contract
// (docs/debugging.md), added, never renamed or removed.
//
// The views are gathered by engine/internal/inspect from the live script versions and the
// trace is recorded by engine/internal/trace; this package holds only what their callers
// see, so that packages outside the engine (debugapi, the CLI, the offline harness) import it
// directly. It knows nothing of versions, informers or runtimes.
//
// Every type here is a value: a view is a copy made when it was asked for, and nothing in it
// is shared with the engine. Subscription is the one live thing: its owner (the tail's
// reader) reads Records from one goroutine and calls Close once done; records arrive in
// recording order, and a reader that falls behind misses records rather than slowing a
// worker down. Nothing here starts a goroutine.
package inspection
