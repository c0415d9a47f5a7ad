// Package recording captures what informers see of a real cluster, for `runner record`, and
// reads it back, for h.replay in `runner test`.
//
// A recording is JSON Lines: one Event per line, in the order the events were received —
// first the initial list of every recorded resource (Initial set), then every change, each
// with the time it was received. Objects are recorded as informers hand them to scripts,
// managedFields stripped.
//
// Record runs dynamicinformer's Factory (the runner's informers) with one handler per
// resource; the handlers run on client-go's goroutines and write through Writer, which
// serializes lines. Record owns the informers and stops them, and waits for them, before it
// returns.
package recording
