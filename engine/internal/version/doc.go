// Package version is one loaded content of one script file as the engine runs it: the events
// its worker takes (Event), the watched resources it subscribes to (Subscription, Target),
// its event queues and their overload policy (NewQueue, Overload), its index stage
// (IndexStage), what its events enqueue for reconcile (ControllerKey), how a script's failure
// is logged (LogFailure), what it keeps for inspection (Inspect: its worker's recording side,
// pauses, subscriptions for readers off the loader), and where it is in its life (State).
//
// It is being moved out of package engine piece by piece (issue 20): the shape to reach is
// controller-runtime's manager/controller split, a Version built from a compiled Program and
// what it needs through small interfaces the engine fills in (informers and the fanout
// registry, the state API's book, the leadership and shard gate, stats, clock, logger), the
// engine being the loader that holds the versions and decides which one is current. So far
// it holds the types a version's worker, index stage and intake share, and the index stage;
// the version itself (engine's version.go and the files of its methods) is still package
// engine's.
//
// Goroutines: IndexStage.Run is the index stage's goroutine, started and joined by the
// version owning the stage; it alone uses the stage's buffers and record of failures, and it
// closes the worker's queue and its runtimes when it returns. A large batch is split across a
// goroutine of the batch's own, joined before the batch goes on.
//
// Ownership and mutation: an Event is a value handed from a producer (client-go's listener
// goroutine through the fanout, the loader, a scheduler, a scrape, the inspection API) to one
// version's queue, and from there to its index stage and worker; only the index stage writes
// it after it was queued (Values), before passing it on. A Subscription is written by the
// goroutine that subscribes (the loader) before it is shared and read-only afterwards; the
// loader publishes the list to other goroutines through Inspect.SetSubscriptions. The
// objects events carry come from the informers' caches and are never mutated.
package version
