// Package trace is the engine's event recorder: what happened to each object in each script
// version (events handled, reconcile runs, replays), with the log lines, API writes and
// reconcile keys of each call, kept in memory for Explain and streamed to tail subscribers.
// It plugs into package engine, which decides what to record and when; this package knows
// nothing of versions, queues or the loader. The record shapes are package inspection's
// (TraceRecord, LogLine, APIWrite, TailFilter, Subscription), the JSON of the debug API.
//
// What it owns:
//   - Recorder: a bounded ring of records (its size overall, inspection.TracePerObject per
//     object, oldest first out) and the live subscriptions. Safe for concurrent use; Record
//     takes one mutex per call and never blocks on a subscriber: one that falls behind misses
//     records and is told how many (Subscription.Missed). A nil Recorder records nothing
//     (recording off).
//   - Tap: what one Script's calls did. Tapped wraps a Script's logger and k8s client so that
//     their output lands in the record the Script's owner opened (Open, Close around each
//     call). A Script's calls never overlap, so one open record per Tap; its mutex is for a
//     runtime abandoned as stuck that may still log after its call returned. Log lines and
//     writes pass through unchanged; each record keeps at most inspection.TraceLogsPerCall
//     and TraceWritesPerCall.
//   - Worker: the recording side of one goroutine that owns a Script (a version's handler
//     worker or one of its reconcile workers): its Tap, the call it runs now (the queue view's
//     call in flight, readable from any goroutine) and the record it builds, reused from event
//     to event. Its owner calls Start, Call, Ended and Done in that order for each event or
//     run; the engine decides what the record says.
//
// Goroutines: none. Records are values: Record copies what it is given, Object and
// subscriptions hand out copies, and nothing here holds a cached object.
package trace
