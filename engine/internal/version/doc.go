// Package version is one loaded content of one script file as the engine runs it: a Version,
// with its runtimes, store and indexes, queues, worker, index stage, subscriptions, reconcile
// workers and scheduler. New builds one from a compiled Program and a Config: the runtime the
// definition was read from, the resolved watches, and what a version needs of the engine as
// values, functions and interfaces owned here (informer acquisition, the fanout registry, the
// clock, the handler series, the state API's book, leadership and the shard gate, the pauses).
// The engine's loader holds the versions and decides which one serves; this package never
// imports the engine.
//
// Files: version.go (the Version, Subscribe, Start, the worker loop, the wait for the sync),
// build.go (Config, New: the index stage and reconcile workers), handle.go (what the worker
// does with each event), enqueue.go (what an event enqueues for reconcile), schedule.go
// (schedules and metric collects on the worker), admit.go (validate and mutate on the
// admission runtimes), shard.go (the question asked before each
// call, the replay of gained keys), trace.go (what the worker records, and Replay), live.go
// (what other goroutines read), end.go (Retire, Drop, WaitIdle, Halt, Close); and the types
// the worker, index stage and intake share: Event and Kind, Subscription and Target, NewQueue
// and Overload (the queues and their overload policy), IndexStage, ControllerKey, LogFailure,
// Inspect (the worker's recording side, the pauses, the subscriptions for readers off the
// loader) and State.
//
// Life, and who calls what. The loader (one goroutine, the engine's) calls New, Start (the
// worker begins before the informers deliver, so it handles the initial adds while they are
// still arriving), Subscribe, then OnSynced. When the version has synced it moves it to
// StateCurrent, calls StartSchedules and StartOutbox and, once the versions it replaces are finished,
// StartReconcile (possibly from a goroutine of its own that waits for them). It retires a
// version once (Retire; Drop for an immediate stop), and a goroutine of the loader's, which
// the engine's Run joins, waits for it (WaitIdle), closes it (Close) and moves it to
// StateDone. Close is the one release: from any state, whether Start ran or not, it
// interrupts what still runs, joins every goroutine the version started and closes every
// runtime it was built with; a failed New or Subscribe is released by it too.
//
// Goroutines. The Version owns every goroutine it starts and joins them all in Close:
//   - the worker (Start): it owns the worker's Script, closes it when it returns, and is the
//     only writer of the store; it runs handlers, schedules, metric collects, outbox deliveries, the replay of
//     gained keys and the functions queued with Do, one at a time, in queue order;
//   - the index stage (Start, with index functions): it alone uses its runtimes, computes each
//     event's index values and passes the events on to the worker's queue in order, closing
//     that queue when its intake is closed and drained;
//   - the scheduler (StartSchedules): it queues due entries for the worker and returns when
//     the version is retired;
//   - the outbox loop (StartOutbox, with an `outbox` and a store; outbox.go): it lists the
//     script's outbox and queues the messages due for the worker, which claims and delivers
//     them; it returns when the version is retired;
//   - the reconcile workers (StartReconcile; package engine/internal/reconcile), which only
//     read the store; Retire shuts their queue down and Close joins them;
//   - none for admission: Validate and Mutate run on the caller's goroutine (the admission
//     server's), each holding one of the version's admission runtimes (a pool of
//     admissionRuntimes, standbys included) for its call; Close lets the calls in flight
//     finish, refuses new ones (ErrRetired: the caller asks the version serving now) and
//     closes those runtimes; Drop interrupts them;
//   - helpers: the one closing Done once the worker and index stage have returned, and the
//     one waiting for the sync (OnSynced), which returns when the version halts.
//
// Mutation. Set by New and read-only afterwards: everything from the Config, the queues, the
// index stage, the reconcile workers and the handler series. The loader's alone: the
// subscriptions list (Subscribe, Retire, ReplayGained; it publishes a copy for other
// goroutines through Inspect, and hands the worker copies in events), the state but for
// StateDone, and the scheduler (set before its first event is queued). The worker's alone:
// the store's writes, the keys a replay of gained keys may enqueue, the record being built.
// Safe from any goroutine: Halt, Close (both idempotent), WaitSynced, Do, QueueCollect,
// Validate, Mutate
// (pushes onto the worker's queue, false once it is closed) and the reads of live.go (queue
// lengths, the published subscriptions, the state, the store under its lock). An Event is a
// value handed from a producer (client-go's listener goroutine through the fanout, the
// loader, the scheduler, a scrape, the inspection API) to one version's queue, and from there
// to its index stage and worker; only the index stage writes it after it was queued (Values),
// before passing it on. The objects events carry come from the informers' caches and are
// never mutated.
//
// Ordering. The events of one informer reach the worker in the order client-go delivers
// them, the index stage keeping that order; before calling a handler the worker applies the
// event to the store and indexes, so ctx.cache agrees with the events already handled. The
// sync marker (EventSynced) is queued behind every subscription's initial list, so the
// version has synced when the worker has handled every initial add. Schedules, collects,
// gained keys and Do are queued on the worker's queue, behind the events already in it.
// Retire with drain closes the intake: the index stage and then the worker handle what is
// queued and return; without, they take no further event. A version's reconcile workers
// start only once its predecessors are finished (the loader's chain), so one key is never
// reconciled by two versions at once, nor by an older version after a newer one.
package version
