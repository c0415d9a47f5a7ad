// Package engine wires script files to shared informers: it is the only package that knows
// both JavaScript (scripting) and Kubernetes informers (dynamicinformer). It owns the loader,
// which builds the script versions and decides which one serves, the memory guard, leader
// election and the state API; what it runs on (informers, clock, the scripts' client) comes in
// through Env.
//
// Layout. The core is this folder, the loader: its goroutine and loop (engine.go), its
// transitions (loader.go; settle.go and internal/settle for the load failures it holds until
// their content settles), what it gathers to build a version (build.go: compile, read the
// definition, check its metric names, resolve its watches, then version.New), the record of
// which informers the live versions need (needs.go) and the environment (env.go, drive.go,
// config.go). A version — one loaded content of one script: its runtimes, store and indexes,
// queues, worker, index stage, subscriptions, reconcile workers and scheduler — is
// internal/version's Version, which takes what it needs of the engine through version.Config
// and never imports it, as a controller-runtime controller is built by its manager. The loader
// holds each in a loaded (build.go) with what only it uses: the source to load again, the
// collector's mark and lift, and the chain of finished predecessors. The version's intake path
// lives in three packages of its own, each knowing nothing of versions:
//   - internal/fanout: the one client-go registration per informer, shared by the versions
//     subscribed to it (fanout.Subscriber: the informer, the queue, how a notification
//     becomes an event), its record of what it handed out and the joiner's initial adds.
//   - internal/queue: the unbounded chunked FIFO between the listeners and a version's worker
//     (many producers, one consumer), its chunk pool and the overflow hook.
//   - internal/coalesce: the overload policy past Config.MaxBacklog (episodes, the WARN an
//     operator reads, jsinformer_events_coalesced_total), over a small interface of events.
//
// The rest of this folder is the engine's side of what plugs into it: each file below hands a
// package its versions or records into it, and nothing more. What plugs in lives in its own
// package, each with a doc.go stating its contract and its own tests, none importing this one:
//   - package status (top level: the state API is public): Status and its types, the Book
//     the loader records each transition into, and the handler counters. status.go builds a
//     Status from the book, the informers and leadership.
//   - internal/health: readiness (Ready, /readyz) and the informers' failure and recovery
//     reports, computed from what needs.go records of the live versions.
//   - internal/memguard: the memory guard's decisions (when to measure, whom to stop,
//     when to collect to know the live heap) and its goroutine. A Version measures its
//     runtimes (RequestMemory, Memory); loaded passes those on and adds Released, so loaded
//     is a memguard.Version; memstop.go starts the guard and stops the version it names on
//     the loader.
//   - internal/leader: leader election, the Lease defaults and the write fence (Fence,
//     shared with sharding). leader.go reloads the scripts on becoming leader and ends Run
//     on losing the Lease.
//   - internal/shardgate: this replica's member of the ring (package sharding), its
//     goroutine and status, and the questions asked before each call (Begin, Handles), which
//     a Version asks together with leadership; shard.go builds the member and has the serving
//     versions replay the keys gained.
//   - internal/gcpace: garbage-collection pacing around reloads; the loader marks and lifts
//     each load (build.go) and settles after a drain (loader.go).
//   - package inspection (top level: the inspection API is public): the shapes of the debug
//     views, actions and trace (QueueView, CacheView, IndexesView, Explanation, TraceRecord,
//     ...) and the errors they wrap. The engine's methods answer with them; debugapi, the CLI
//     and package offline import them directly.
//   - internal/inspect: the inspection API itself (Inspector: Queue, Cache, Indexes,
//     IndexSummaries, Explain, Subscribe, Retry, Pause, Resume, Replay), the reconcile key
//     book and the pauses. inspect.go hands it the engine's environment (inspect.Env) and
//     forwards the engine's methods. A Version is an inspect.Live (what the views read, and
//     Requeue, Do: run a function on the worker, Done, and Replay: the replayed call, which
//     runs on the worker).
//   - internal/reconcile: the reconcile workers (Workers: the rate-limited workqueue, one
//     runtime per worker, one key never run twice at once, retries up to MaxRetries, the
//     begin/handles hooks, shutdown, drop, close, and what a reconcile run's record and key
//     book say); version.New makes them on the version's cache and hooks, the loader starts
//     them once the version they replace is finished, and the version stops and closes them.
//   - internal/schedule: the scheduler loop (Loop: one timer on the engine's clock, each
//     entry queued once at most); a Version starts it on its running group when the loader
//     makes it current (StartSchedules) and runs each due entry on its worker.
//   - internal/trace: the event recorder (records, tail subscriptions, the taps on each
//     Script's logger and client, and Worker: the recording side of one worker and its call in
//     flight); build.go taps each runtime (tapped), and a Version decides what a handler
//     call's record says.
//   - internal/enginemetrics: the engine's own series (stats.go adds the state API's handler
//     counters to them), the scripts' metric families, the informer-health collector and the
//     shard ring's; each Version registers its families and runs their collects on its worker,
//     metrics.go checks family names across scripts, shard.go counts the keys each script
//     owns.
//
// Beside them, at top level: package sharding (the ring, behind internal/shardgate),
// k8sclient (the scripts' `k8s` client, events, redaction, and the forced dry-run of one
// replayed call, whose transport New wraps around every client) and offline (an in-memory
// cluster and virtual clock that drive the engine through drive.go).
//
// Goroutines and ownership:
//   - Run's goroutine is the loader. It alone owns the map of plugins, applies file events
//     from the plugins watcher and version syncs one at a time, and decides which version of a
//     script is current.
//   - Each version (one content of one file; package engine/internal/version states its own
//     contract in full) has one worker goroutine that owns its goja
//     runtime and is the only writer of its store and JS indexes. The engine registers one
//     client-go handler per informer (internal/fanout) whatever the number of versions
//     watching it; on client-go's listener goroutine it only appends to each version's queue
//     (internal/queue), which never blocks them, so a slow or stuck script never delays
//     another script or the informers. Past Config.MaxBacklog queued events, updates of an
//     object whose last queued event is an update are folded into it (internal/coalesce): the
//     overload policy that bounds a slow script's backlog.
//   - A version whose script has index functions also has an index goroutine with a runtime
//     of its own, between the listeners and the worker: it computes each event's index values
//     and passes the events on in the order it got them. A large batch (a reload's replay) is
//     split in two, the second half computed on a second index runtime by a goroutine the
//     stage starts and joins per batch. Index functions are pure by contract, so computing
//     them on other runtimes is invisible to the script.
//   - A script exporting reconcile gets its own workers (Concurrency of them, each with its own
//     runtime) fed by a client-go rate-limited workqueue; they only read the store (package
//     engine/internal/reconcile).
//   - A version with schedules, once it serves, has a scheduler goroutine in its running group
//     (package engine/internal/schedule); it ends when the version is retired.
//   - The permission check (permissions.go, package permissions' Checker) has one goroutine,
//     started and joined by Run: the loader hands it each loaded version's needs (setNeeds,
//     before the version subscribes) and forgets unloaded scripts; it reviews them with the
//     API server at once, on each change and every Config.PermissionCheckInterval. Each
//     version's k8s client is wrapped (permissions.Observe) to record refused calls and to
//     feed Config.ObserveCalls, on the calling script's goroutine.
//   - A script exporting validate or mutate gets admission runtimes of its own (on every
//     replica, standbys included), which the caller's goroutine uses, one call each
//     (admission.go): AdmissionScript routes each call to the version serving the script,
//     from a table the loader publishes when a version becomes current, a script is unloaded
//     or the memory guard stops one (Config.OnAdmission tells the webhook registration);
//     a version being closed first lets its admission calls in flight finish. Its load
//     fails when its webhooks, under failurePolicy Fail, would cover a resource its
//     resolved watches show to be cluster-scoped, or Leases, without
//     admission.allowClusterLockout (admitscope.go, scripting.LockoutRisk).
//     RecordAdmission keeps a decision the webhook server made in the trace, with the
//     object's other records (Event "admission"), from any goroutine.
//
// Ordering: a version handles the events of its informers in the order client-go delivers
// them, so events for one object arrive in API order. Before calling a handler the worker
// updates the store and indexes, so ctx.cache always agrees with the events already handled.
//
// A version owns every runtime it is built with (worker, index stage, reconcile workers: the
// reconciler owns its runtimes whether its workers ever start) and every goroutine it starts,
// including the one waiting for its sync. However it ends (superseded or unloaded while
// syncing, retired by a reload or an unload, stopped by the memory guard, or at shutdown),
// the loader retires it once (Version.Retire; later calls do nothing) and a retiring goroutine
// Run joins calls Version.Close, the one release: safe from any state, it interrupts what
// still runs, joins every goroutine and closes every runtime. scripting.LiveRuntimes (and the
// jsinformer_script_runtimes metric) counts the runtimes alive, for tests and operators.
//
// Reload: a new version subscribes to the fanouts of its informers, receives every cached
// object as an add with isInInitialList (from the fanout's record of what it delivered, in
// one burst, or through client-go's replay to a fanout registered for it), and builds its own
// store and indexes. When every subscription has been given its initial list and the worker
// has handled those adds, the loader makes it current and retires the old version: it is
// taken off the fanouts (once that returns nothing more is queued for it; the last
// subscriber's leaving removes the registration, waiting until client-go delivers nothing more), the
// events already queued are still handled (bounded by drainLimit), and its informers are
// released. Every change therefore reaches at least one version, and the new one ends with
// the server's state. A load that fails at any step leaves the old version running (the
// failure of content read moments after it changed is reported only once the watcher says
// that content has settled: it may be a save in progress; internal/settle); one that
// failed because its watch names a resource the server does not serve is retried every
// Config.RetryUnknownResources, so a CRD installed later is picked up.
//
// Health: informers report failures and recoveries (dynamicinformer.Options.OnHealth); the
// engine logs them with the scripts concerned (package engine/internal/health). The loader
// records which informers each live version needs (needs.go, under its own mutex) so that
// Ready, the metrics and those logs can read it from other goroutines. An update whose
// metadata.uid changed is split into a delete (final state unknown) and an add before it is
// queued.
//
// Leader election (leader.go; the elector is package engine/internal/leader): the elector
// goroutine is started by Run and joined after every version has stopped, so the Lease is
// released only when nothing of this runner can still write. Versions built while standing by
// call nothing; becoming leader loads every script again. Calls and writes are fenced on the
// last renewal being within the renew deadline. At shutdown versions take no further event and
// the calls in flight get the handler timeout (plus a second) to finish before they are
// interrupted.
//
// Sharding (shard.go, Config.Sharding; package engine/internal/shardgate): a member of package
// sharding runs on a goroutine Run starts (shardgate.Gate.Start) and stops after every version
// has stopped (then it deletes its Lease). Informers, stores and indexes stay complete on every
// replica; each handler call, reconcile run and schedule run first asks the member to begin a
// call on its key (a Version asks before each call), which refuses keys another replica owns and counts the calls
// in flight so that a key moves only once they ended. Watch enqueue mappings run on every
// replica and each queues only the keys it owns. The loader learns of gained keys (Gains) and
// queues a version.EventGained on the serving and syncing versions, whose workers replay the gained
// objects as initial adds and enqueue the gained reconcile keys, also those that events named
// while another replica handled them (shardgate.Gate.Accept). A member that cannot renew
// within the renew deadline handles nothing and the fenced transport refuses writes until it
// has joined the ring again (the API server back): then it gains, and replays, all its keys.
// With Config.ShardCache (shardcache.go) a script's watches cache only the namespaces (or, for
// shard: "uid", the uids) of this replica's slices (dynamicinformer.Key.Partition) and keys are
// placed by namespace (shardrange.Plan.KeyOwner), a uid-partitioned version's handler calls
// by the object's uid (version.Version.OwnerKey); the loader loads partitioned scripts again when the member
// observes a new ring (Targets), and replays gained keys on the version caching the new
// partition.
//
// Garbage collection: a reload allocates in proportion to the cache it replays. After the old
// version has drained, and once after the initial sync, the engine itself starts a collection
// when the next reload would otherwise start one midway (package engine/internal/gcpace); that
// goroutine is one of the retiring ones Run waits for. While a load replays, the pacer
// lifts the GC percent so that a load's allocation fits below the goal; the lift is the
// version's (ended when it closes, or once its predecessor has drained), and the user's percent
// is back when no lift is left.
//
// Memory guard (package engine/internal/memguard; memstop.go): with Config.MemoryLimit, a
// goroutine started by Run and joined before the versions stop reads the heap every
// MemoryCheckInterval, and runs a garbage collection itself (on its own goroutine, blocking
// only itself) when the last live figure is stale near its threshold and a version qualifies
// for a stop. It asks serving versions for measurements (taken by each Script's owner after its
// next call, never concurrently with it) and hands the loader the version to stop; only the
// loader stops it, at once (its running call interrupted, its queued events and reconcile keys
// dropped and counted), and remembers its content as stopped until the file changes. The guard
// keeps no reference to a version it no longer sees serving, so a stopped version's runtime is
// garbage.
//
// Metrics from scripts (metrics.go; the families are package engine/internal/enginemetrics's):
// one collector, registered once, maps each script to its serving version's families; the
// loader swaps the entry in onSynced, when the new version takes over, and removes it when a
// version retires without a successor, so a scrape sees one version's families per script. A
// scrape queues a version.EventCollect on each serving version's worker and waits until its
// deadline (Config.MetricCollectTimeout, 1s by default), serving the families answered by then;
// the worker runs the collects between two events, so they read the store as the handlers do.
// Only the leader computes a family, and under sharding only the replica owning its key
// ("metric:SCRIPT#FAMILY"), so it is served once across the replicas. Families without collect
// live in Go behind a mutex per family, written by the worker, reconcile workers and
// schedules through ctx.metrics.
//
// Environment (env.go): the engine takes what it runs on as small interfaces it owns —
// Informers and Resolver (where objects come from), Clock (scripts' Date, schedules, reconcile
// delays and queues, fetch's timeouts) and the `k8s` client of each version (package
// k8sclient: writes, the Event recorder, redaction). New builds the real ones on a cluster;
// package offline builds an in-memory cluster and a virtual clock and drives the engine
// through drive.go (NewDriven, Load, Idle, Workers, Close) in place of Run; with Env.OnParked
// it also counts the calls that wait only on fetch requests held for its clock, and Workers
// tells it whether every busy worker is in one. A driven engine audits as Run's does (its
// audit set starts with NewDriven, without a report writer), and Idle waits for the audits'
// initial passes and queues. A driver's Close interrupts the calls still running. Nothing in
// the engine asks which one it runs on.
//
// State API (package status; status.go): Status is a snapshot of scripts, their versions and
// states, recent loads, handler counters, watches, informers and leadership, safe from any
// goroutine; StatusChanged signals each change. The loader records every transition in the
// book; the goroutine that joins a retired version freezes it as done, so the book never holds
// a finished version's memory. Status.Server is the API server's /version, read once by Run's
// connection check (serverversion.go), which also logs the one WARN of an API server older
// than the support window (OldestSupportedMinor; nothing in the engine chooses a behaviour by
// version: features are detected where they differ).
//
// Inspection (inspect.go; packages inspection, engine/internal/inspect, engine/internal/trace,
// engine/internal/version for what a worker records and the replay, and
// engine/internal/reconcile for reconcile runs): every event a worker
// handles, every reconcile run and every replay becomes an inspection.TraceRecord in a bounded
// recorder (inspection.TracePerObject per object, Config.TraceRecords overall, oldest first
// out), with the call's log lines, writes and enqueued keys, collected by a tap wrapped around
// each Script's logger and k8s client (each Script's calls never overlap, so one open record
// per tap). The recorder, the taps and each worker's recording side are package
// engine/internal/trace; the version decides what to record and when. Explain, Queue, Cache,
// Indexes, Status and Subscribe read from any goroutine: they find live versions through
// needs and read stores under their locks. Actions never touch a version's runtime from
// outside: Replay travels as a function on the worker's queue (inspect.Live.Do, a version.EventDo),
// Retry goes through the reconcile workqueue, Pause holds the worker before its next event
// (inspect.Pauses).
// Package debugapi serves all of it; this package knows nothing of HTTP.
//
// Objects come from the informers' caches and are shared: nothing in this package mutates
// them, and scripts see them through read-only views.
package engine
