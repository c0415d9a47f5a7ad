// Package reconcile runs a script's reconcile(key, ctx) on its own workers (Workers), fed
// from a client-go rate-limited workqueue:
//   - keys are deduplicated by the queue, and one key is never run by two workers at once
//     (the queue hands a key out again only after Done);
//   - a run that fails is retried with the queue's backoff up to MaxRetries times (MaxRetries+1
//     runs in all), then forgotten ("reconcile failed; giving up on key", and its book entry
//     says so); a run that returns requeueAfter is queued again after that delay;
//   - before each run Hold waits while the script is paused, then Begin is asked (leadership,
//     shard ownership, as they are after the pause): a key refused is dropped, not run;
//     Enqueue queues only the keys Handles accepts (another replica's are not queued here);
//   - each run becomes a trace record on its worker's trace.Worker and updates the queue
//     view's inspect.KeyBook.
//
// It plugs into package engine, which builds the runtimes (one per worker, each its own goja
// runtime, so module-level JS state is shared neither between workers nor with the event
// handlers), hands in the version's cache view, metrics and hooks, and decides when the
// workers start (once the version they replace is finished) and stop. It knows nothing of
// versions, queues of events or the loader.
//
// Ownership and goroutines: the Workers own their runtimes and queue from New on. Start
// starts one goroutine per runtime, each the only caller of its runtime's Reconcile; Start
// after Shutdown starts nothing. Shutdown stops taking keys (the workers finish the keys
// queued and return) without waiting; Drop also skips the keys left and interrupts the
// running ones; Wait joins the workers. Close interrupts, joins the workers and closes every
// runtime, whether the workers ever started or not, so a retired version's runtimes always
// go. Enqueue, Requeue, Book, Len and the stopping methods are safe from any goroutine.
package reconcile
