// Package bench holds jsinformer's benchmarks against a real local control plane (etcd and
// kube-apiserver from bin/, see internal/controlplane). It has no non-test code; results and
// the commands that produce them are in docs/benchmarks.md.
//
// What the benchmarks guarantee about their numbers:
//   - Every figure compared with a baseline is measured in the same process and run as that
//     baseline, alternating the contenders round by round, and ratios are computed in the run
//     (b.ReportMetric); nothing is compared with a figure from another run or machine.
//   - Live heap is runtime.MemStats.HeapAlloc after two forced GCs, taken while the informer
//     (or engine) still runs and holds its cache, minus the same reading taken just before it
//     started. Time is wall time from start until every initial object has been handled.
//   - The latency comparisons (BenchmarkTraceLatency, BenchmarkScriptMetricsLatency) alternate
//     contenders in short slices inside one process, a contender being a runtime toggle
//     (slices_test.go), and report p50 and p99 with bootstrap intervals over rounds
//     (slicestats_test.go), for the whole write→handler latency and for the runner's own share
//     of it (its handler time minus a bare client-go informer's for the same write).
//   - BenchmarkFetchThroughEngine alternates the runner (a JS handler that fetches from a
//     loopback server) and a client-go informer with a Go handler doing the same request,
//     round by round, each on a namespace of its own, and reports write→answer-read p50/p99
//     and process CPU per request of each, then live heap and goroutines over requests and
//     reloads.
//   - BenchmarkProcessInitialSync measures whole processes instead: wall time from exec until
//     the process prints that it has handled every object, and the kernel's peak RSS of the
//     process (getrusage). Its client-go contender is this test binary re-executed
//     (clientGoChild, chosen by an environment variable in TestMain).
//   - BenchmarkAdmission creates ConfigMaps through the API server at a fixed rate, one
//     namespace per contender (no webhook, one validate, one mutate, ten validates, a validate
//     beside a busy reconcile), contenders alternating slice by slice in one process; the
//     runner's time per request is measured around its admission server's handler.
//   - BenchmarkAudit measures continuous audit (three policies over the seeded Deployments)
//     in one run: the time from a policy save until every report is written, the report
//     writes counted by the runner and by kube-apiserver (apiserver_request_total) for each
//     step and per object change, the write→handler latency in alternating slices with and
//     without audit work, and whole processes' peak RSS (VmHWM: a child's ru_maxrss includes
//     this process's own peak, which the benchmark's in-process runner raises).
//   - BenchmarkShardCache runs runner processes with --sharded --shard-cache on Deployments of
//     its own (shardcacheseed_test.go: 200 namespaces, and one large namespace for its skewed
//     part), kube-apiserver restarted per variant with ShardedListAndWatch on or off: each
//     replica's peak RSS (VmHWM) above its RSS with the ring joined and no script yet, and the
//     API server's CPU and peak RSS over the N syncs, as BenchmarkAPIServerCost takes them.
//   - The default ns/op, B/op and allocs/op cover a whole benchmark (seeding, every round,
//     start-up and shut-down) and are not the figures to quote; the custom metrics are.
//
// Ownership: the control plane is started once per test binary by TestMain, and only when
// benchmarks are requested (-test.bench), so `go test ./bench/` stays fast. The 20,000
// Deployments (or $JSINFORMER_BENCH_OBJECTS) of each shape — realistic ones in namespace
// "bench", small ones in "bench-small" — are created once per process, on first use, and
// shared read-only by every benchmark: no benchmark creates, changes or deletes them.
// BenchmarkAudit adds Deployments of its own beside them in "bench" (audit-flip-NNNN) for
// its in-process part, changes their labels, and deletes them before its process part.
package bench
