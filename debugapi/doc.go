// Package debugapi serves the runner's debug API: JSON views of a running engine under
// /debug/ and actions under /debug/actions/, for `runner status|queue|cache|indexes|explain|
// tail|retry|pause|resume|log-level|replay` and the web page. It depends on package engine
// (through the Source interface, which *engine.Engine satisfies); the engine knows nothing of
// it.
//
// Endpoints (docs/debugging.md is the reference; shapes are package inspection's types):
//
//	GET  /debug/status                                  Options.Status's value
//	GET  /debug/queue[?script=S]                        inspection.QueueView
//	GET  /debug/cache?resource=R[&object=NS/NAME]       inspection.CacheView
//	GET  /debug/cache?resource=R&script=S&index=I&value=V
//	GET  /debug/indexes?resource=R&object=NS/NAME       inspection.IndexesView
//	GET  /debug/explain?resource=R&object=NS/NAME[&events=N]  inspection.Explanation
//	GET  /debug/tail[?script=S&resource=R&object=NS/NAME]     server-sent events, one
//	     "record" event per inspection.TraceRecord (data: its JSON), comments as keep-alives
//	POST /debug/actions/retry      {"script","key"}
//	POST /debug/actions/pause      {"script"}
//	POST /debug/actions/resume     {"script"}
//	POST /debug/actions/log-level  {"level","for"}  for: a Go duration, default 10m
//	POST /debug/actions/replay     {"script","resource","object","dryRun"} -> inspection.TraceRecord
//	     /debug/pprof/...          only with Options.Pprof
//
// Errors are {"error": "..."} with 400 (bad input), 404 (unknown script, resource, object,
// key, index), 405, 415 (an action not sent as application/json), 503 (more tail streams
// than Limits.MaxTails) or 500.
//
// Limits (limits.go) bound what any client may hold, authenticated or not: open connections
// (more are closed as soon as accepted), tail streams, and the time to read a request, to
// write an answer and to keep an idle connection. Streams lift the read and write deadlines
// (a passed read deadline would cancel their context) and set a write deadline per write.
//
// Safety: on a loopback address requests are not authenticated (reaching the port takes
// kubectl port-forward or exec, which RBAC gates), but a Host header that is not a loopback
// name is refused (DNS rebinding) and actions must be sent as application/json, which a web
// page of another origin cannot do without a CORS preflight this server never grants. On any
// other address Options.Auth authenticates and authorizes every request (auth.go).
//
// Goroutines: Serve runs the http.Server on the caller's goroutine and returns when ctx is
// done, after the server has closed; each request runs on net/http's goroutine; a tail
// request holds its goroutine until the client goes or the server closes. The log-level
// timer is stopped by Serve on the way out (the level put back), and a log-level request still
// in flight then is refused (503) rather than starting a timer nobody would stop; a timer that
// fires as a newer override is set cannot end the newer one.
package debugapi
