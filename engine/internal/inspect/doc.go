// Package inspect holds what package engine's debug views and actions use beside the versions
// themselves: what a reconciler's keys are doing (KeyBook, the queue view's keys), which
// scripts are paused (Pauses), and Explain's verdicts (Judge: does a watch show an object, and
// if not why; Redact: an object as the views show it, a Secret's values hidden). It plugs into
// package engine, which records into a KeyBook from its reconcile workers, consults Pauses
// before each event and reconcile key, and gathers the views from its live versions; it knows
// nothing of versions, queues or the loader.
//
// KeyState, Delivery and WatchView are JSON of the debug API, shown by package engine under
// the same names: field names are a contract (docs/debugging.md), added, never renamed.
//
// KeyBook and Pauses are safe for concurrent use: writers are the engine's workers, readers
// the debug views on any goroutine. Judge and Redact never mutate the object they are given
// (it is the informers' shared copy). Nothing here starts a goroutine; Pauses.Wait blocks its
// caller (a worker) until the script is resumed or its version stops.
package inspect
