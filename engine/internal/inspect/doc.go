// Package inspect gathers package engine's debug views and keeps what they use beside the
// versions themselves: the views of the live versions' work and caches (Queue, Cache, Indexes,
// IndexSummaries), whether each script is shown an object and why not (Deliveries, from
// Judge's verdict on one watch), what a reconciler's keys are doing (KeyBook, the queue view's
// keys), which scripts are paused (Pauses), an object as the views show it (Redact: a Secret's
// values hidden), and the lookups the views share (Serving, SplitKey, Suggest).
//
// It plugs into package engine, which hands it the live versions as Live (name, content hash,
// state, backlog, call in flight, reconcile keys, store and index functions, resolved
// watches), records into a KeyBook from its reconcile workers and consults Pauses before each
// event and reconcile key. It knows nothing of versions, queues or the loader beyond Live, and
// never touches a version's runtime: actions that must (Replay, Retry) stay in the engine.
//
// The views' types, KeyState, Delivery and WatchView, and the errors the views wrap
// (ErrNotFound, ErrInvalid) are package inspection's: the JSON of the debug API, which package
// engine answers with and package debugapi serves.
//
// Every function here is safe from any goroutine as Live's methods are: each view reads a
// version's store under the store's own locks, one version at a time, and copies what it
// returns. KeyBook and Pauses are safe for concurrent use: writers are the engine's workers,
// readers the debug views on any goroutine. Judge, Deliveries and Redact never mutate the
// object they are given (it is the informers' shared copy). Nothing here starts a goroutine;
// Pauses.Wait blocks its caller (a worker) until the script is resumed or its version stops.
package inspect
