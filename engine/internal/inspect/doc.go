// Package inspect answers package engine's inspection API (package inspection's shapes):
// Inspector's views of the live versions' work and caches (Queue, Cache, Indexes,
// IndexSummaries), Explain (the server's copy of an object — read only for a resource a live
// version watches — whether each script is shown it
// and why not, its trace records), the live tail (Subscribe), and the debug API's actions
// (Retry, Pause, Resume, Replay). Beside the versions it keeps what a reconciler's keys are
// doing (KeyBook, the queue view's keys) and which scripts are paused (Pauses), and shares
// the lookups the views use (Serving, SplitKey, Suggest, Judge, Redact: a Secret's values
// hidden).
//
// It plugs into package engine, which implements Live on its versions (name, content hash,
// state, backlog, call in flight, reconcile key book, store and index functions, resolved
// watches; and for the actions Requeue, Do, Done and Replay) and hands Inspector an Env (the
// live versions, the resolver, a read of the server's copy, the state API, the shard ring's
// owner, the recorder, the pauses). It records into a KeyBook from its reconcile workers and
// consults Pauses before each event and reconcile key. It knows nothing of versions, queues
// or the loader beyond Live.
//
// Goroutines and mutation: every method here is safe from any goroutine as Live's methods
// are (Live.Replay excepted: it is only ever run on the version's worker, inside Live.Do).
// Each view reads a version's store under the store's own locks, one version at a time, and
// copies what it returns. No action touches a version's runtime from outside: Retry goes
// through the reconcile workqueue (Live.Requeue), Pause holds the worker before its next event
// and the reconcile workers before their next key, Replay queues its call behind the events
// already queued (Live.Do) and waits for its answer, the version's end (Live.Done) or its
// context. KeyBook and Pauses are safe for concurrent use: writers are the engine's workers,
// readers the debug views on any goroutine. Judge, Deliveries and Redact never mutate the
// object they are given (it is the informers' shared copy). Nothing here starts a goroutine;
// Pauses.Wait blocks its caller (a worker) until the script is resumed or its version stops.
package inspect
