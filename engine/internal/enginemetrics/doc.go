// Package enginemetrics is everything package engine exports to Prometheus: its own series
// (Engine: handler calls and durations, loads, versions alive and their queue depth,
// leadership, the memory guard's measurements and stops), the metric families scripts
// declare (Scripts, Version), the informers' health and the runner's readiness at scrape time
// (Informers), and a sharded runner's ring (NewShard: its members, the ring changes applied
// and the keys it owns per script, read through Ring's funcs at scrape time). It plugs into
// package engine, which tells it what happened (a load, a stop, a version added or ended),
// which version serves each script, and runs the collects; it knows nothing of queues,
// runtimes or the loader.
//
// What it owns and who calls it:
//   - Scripts is the one prometheus.Collector, registered once, for every script's families.
//     The engine's loader (one goroutine) calls NewVersion when it builds a version, Serve at
//     the switch to a new version and Withdraw when a version retires (it may still drain);
//     each is one map write under a mutex, so a scrape sees one version's families per script,
//     never half of each and never both. A replaced or withdrawn version counts no more
//     failures, and the error series of a script no version serves are deleted under that
//     mutex, so a removed script leaves none behind. Scrapes call Collect on their own
//     goroutines.
//   - A family with collect is computed at scrape time on the version's own worker: Collect
//     hands a CollectRequest to the version's Worker (the engine queues it like an event) and
//     waits until the scrape's deadline (NewScripts; DefaultCollectDeadline, well under
//     Prometheus's 10s scrape timeout), however many scripts and families there are; the
//     worker answers family by family with CollectRequest.Serve between two events, so
//     collect reads ctx.cache as the handlers do, and stops once the scrape has stopped
//     waiting. A family that throws, times out, returns an invalid sample or more than the
//     series limit, or is not answered by the deadline (its worker busy or paused), is left
//     out of that scrape and counted in jsinformer_script_metric_errors_total (Errors); the
//     families answered are served, and so is everything else on the registry. A failure is
//     logged once until the family is collected again.
//   - A family without collect lives here (live.go): Version implements scripting.Metrics
//     (Sink, ctx.metrics), written by the version's worker, reconcile workers and schedules
//     under a mutex per family and read by scrapes. A new version starts from zero.
//   - Engine's verbs are called by the engine's loader (Loaded, LoadFailed, MemoryStopped,
//     StopLifted, Leading, Forget, VersionAdded), by the goroutine that joins a retired
//     version (VersionEnded, once its goroutines have ended), by the memory guard's goroutine
//     (MemoryMeasured), and each Handler's Observe by the goroutine that made the call (a
//     worker, a reconcile worker). Every one is safe for concurrent use (Prometheus vectors;
//     the queue-depth collector's set under its mutex). The queue depth is read at scrape
//     time from each live version through Backlogged, which must be safe from any goroutine.
//     A Handler also counts into the state API's status.CallCounts the engine hands it.
//   - CheckNames refuses a definition whose families would expose a series another script
//     declares: metric names are shared by every script.
//
// Goroutines: Collect starts one per serving script and waits for all of them; nothing else
// here starts one. Nothing here holds an object from the informers' caches.
package enginemetrics
