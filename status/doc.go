// Package status is the engine's state API: what a runner is doing, as a snapshot safe to
// take from any goroutine. Status and the types it holds are the JSON of the debug API's
// /debug/status (docs/debugging.md): field names are a contract, added, never renamed. Tests
// assert on Status (package engine's Engine.Status and Engine.StatusChanged) rather than on log
// wording; the debug views and `runner status` show it. Status.Runner (RunnerInfo: pid, host
// or pod, scripts folder, debug address) is set by the debug API only, never by the engine;
// RunnerInfo is also the discovery record `runner list` reads.
//
// Book is where package engine records each script's transitions (a version added, done, a
// load's outcome, a failed or stopped content, a file removed) and Counts its handler
// counters; Book.Scripts and Counts.Snapshot build the scripts' part of a Status. The book
// holds a live version only through Live, and freezes its VersionStatus when it is Done, so
// it never keeps a finished version's memory reachable. This package knows nothing of
// versions, informers or scripts' runtimes: the engine converts its errors and watches into
// ErrorStatus and WatchStatus.
//
// Book and Counts are safe for concurrent use: writers are the engine's loader, the
// goroutines that join retired versions and the handlers' callers; readers any goroutine.
// Every change to the book, and every Bump, closes the channel Changed returned before and
// moves Status.Seq. Nothing here starts a goroutine.
package status
