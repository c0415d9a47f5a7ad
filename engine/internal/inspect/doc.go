// Package inspect holds the state package engine keeps for its debug views and actions, beside
// the versions themselves: what a reconciler's keys are doing (KeyBook, the queue view's keys)
// and which scripts are paused (Pauses). It plugs into package engine, which records into a
// KeyBook from its reconcile workers and consults Pauses before each event and reconcile key;
// it knows nothing of versions, queues or the loader.
//
// Both types are safe for concurrent use: writers are the engine's workers, readers the debug
// views on any goroutine. Nothing here starts a goroutine; Pauses.Wait blocks its caller (a
// worker) until the script is resumed or its version stops.
package inspect
