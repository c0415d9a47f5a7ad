// Package jstest runs the test files of `runner test`: *.test.js and *.test.ts files that
// drive plugins through the runner's own engine (offline.Harness) against an in-memory
// cluster (internal/memcluster) on a virtual clock.
//
// A test file is compiled like a plugin (scripting.Compile: ESM, TypeScript, source maps)
// and run in a goja runtime of its own with the globals test (it), test.skip, describe,
// beforeEach, afterEach, expect (expect.js, Jest's matchers) and harness. Its top-level code
// declares tests; RunFile then runs them in order. A failure is reported with the message
// (for an assertion: expected, received and a line diff) and the file:line:col of the
// innermost frame in the test file.
//
// harness(plugin, {objects, flags, now, http, admission}) builds a cluster, seeds it, loads the
// folder's admission scripts (admitscripts.go: the plugins defining validate or mutate, or those
// listed) and the plugin, and returns h. The cluster sends every later write to the admission
// scripts' webhooks (offline's hook); h.admit asks them about one request (admit.go). Writes through h return once the engine is quiet, without moving the clock;
// h.settle and h.advance move it. h.writes, h.logs and h.errors are what the plugin sent,
// logged and failed with; h.metrics and h.metricsText scrape its metric families
// (engine.Offline.Metrics, collects running on the plugin's worker as at a real scrape).
//
// jsinformer-test.d.ts (Declarations, written by `runner types`) declares these globals and
// the harness for TypeScript; TestDeclarationsMatchTheRuntime keeps it in step with install,
// expect.js and the harness's methods and options.
//
// Goroutines: RunFile runs the file on the calling goroutine, which owns the runtime and
// plays the loader of every engine it starts; each engine's goroutines are stopped by
// closing its harness, which happens when the test that opened it ends. A test is
// interrupted when it outlives Options.Timeout.
package jstest
