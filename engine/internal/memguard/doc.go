// Package memguard is the memory guard: under a memory limit, find the script version whose
// runtimes keep growing and have it stopped before the process runs out of memory, keeping the
// others running. It plugs into package engine, which implements Version on its versions,
// lists the serving ones (Config.Serving) and stops the one the guard names (Config.Stop: the
// engine's loader alone stops versions). It knows nothing of versions beyond Version.
//
// goja keeps no account of what a runtime allocates, so the guard asks: while the Go heap is
// above watchShare of the limit, every serving version measures its runtimes after its next
// call (Version.RequestMemory; in the engine scripting.Script.RequestMemoryUsage: the bytes
// reachable from the runtime, walked by internal/heapsize). Once the live heap is above its
// threshold (actShare of the limit, lower when the live heap grows fast: trend.go), the guard
// stops the largest version whose measurements grew over its last growthSamples (suspect), if
// it holds at least minShare of the limit. A version is measured only when it runs, which is
// also the only time it can grow.
//
// The live heap is known only at the end of a collection, and the runtime's pacing lets the
// heap double between two: a live figure of 200 MB can be followed by 400 MB at the next one.
// So the guard watches from the heap in use (live objects and garbage not yet collected, an
// upper bound of the live heap now), and when that bound has reached the threshold while the
// last live figure is below it, and a version qualifies for a stop, it collects itself to know
// (refresh). A process whose heap is large but whose scripts do not grow is never collected
// by the guard.
//
// Goroutines and ownership: Guard.Run runs on its caller's goroutine, or on the one Start
// starts and its join stops and waits for (the engine starts it and joins it before the
// versions stop), and owns all of the guard's state; every Config func is
// called on it, Collect included (blocking only the guard). After a stop the guard holds off
// for quietChecks checks, and until the stopped version has Released its runtimes (at most
// maxQuietChecks), then collects before acting again. The guard keeps no reference to a
// version it no longer sees serving, nor past an episode below watchShare, so a stopped
// version's runtime is garbage.
package memguard
