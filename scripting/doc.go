// Package scripting runs one user script file in goja: it compiles the file, instantiates it,
// validates the definition it exports, and calls its handlers and index functions. It knows
// nothing of informers; the engine feeds it objects and events.
//
// # Lifecycle and ownership
//
// CompileIn bundles a file of a scripts folder (ESM `export default`, CommonJS
// `module.exports`, or TypeScript) with the files and node_modules packages it imports, into
// CommonJS, with esbuild, and compiles it once; Compile does the same for a file on its own,
// which may import nothing. Resolution stays inside the folder and Node.js built-ins are refused
// with a clear error; Imports lists the files a plugin bundles, for the folder watcher. A
// *Program is immutable and may be instantiated concurrently from any number of goroutines.
// esbuild runs on the calling goroutine's behalf and has returned when these functions do.
// Compiling also reads the bundle's syntax tree for its k8s calls (staticcalls.go:
// Program.Calls, the resource and namespace values known without running the script), which
// package permissions turns, with the definition's `permissions`, into what a script needs.
//
// Program.Instantiate creates one goja runtime, installs the globals (console, log, util, k8s,
// and defineScript, the identity, for typed definitions; Declarations describes them all),
// evaluates the module under the call deadline and validates the exported definition. The
// returned *Script is owned by the goroutine that uses it: OnAdd, OnUpdate, OnDelete, Index,
// IndexAll, Reconcile, RunSchedule, Collect, Validate, Mutate and Close must never run concurrently on one Script. Interrupt is the only method
// that may be called from any goroutine; it aborts the running call and fails every later call
// fast with ErrInterrupted, for a version that is being dropped. Close interrupts and waits for
// the Script's goroutine; the owner calls it when done with the Script.
//
// The runtime lives on a goroutine of the Script's own, its executor, which the owner hands each
// call to and waits for; the owner is never the goroutine running JavaScript (IndexAll hands
// over a batch of index calls at once and runs them nested in one top-level call, each with
// its own deadline and result: indexbatch.go). Every call has a
// deadline (Options.Timeout): the runtime is interrupted when it passes, and the context given to
// Client calls is cancelled at the same moment. The interrupt stops JavaScript within an
// instruction, but not a Go built-in in progress (a backtracking regular expression, a loop over
// a huge array): a call still running Options.Grace after its deadline, or Grace after
// Interrupt, is stuck. The owner then stops waiting and gets ErrStuck; the runtime is
// abandoned (stopped, its goroutine left to end when the built-in returns, waited for by
// nobody), and the next call starts a fresh runtime from the Program, so module-level state
// starts afresh. While maxStuck abandoned runtimes of one Script are still busy, calls fail
// fast with ErrStuck instead. Precision: a call returns to its owner at most Timeout + Grace
// after it started (Instantiate: twice Timeout, for the module and the definition, plus Grace),
// late only by timer and scheduling delay (milliseconds; more on an overloaded machine). The
// hand-over costs about a microsecond per call (docs/benchmarks.md).
//
// A handler that returns a promise must settle it within the call; since k8s calls are
// synchronous, awaiting them does, and fetch's promises are settled by the call itself.
//
// # fetch
//
// fetch, Headers, Response, AbortController and AbortSignal (fetch.js over fetch.go) send
// requests through Options.HTTP. Each request runs on a goroutine of its own, started by the
// executor and owned by the instance; its result is handed back to the executor, which alone
// touches the runtime and settles the promise (fetchsettle.go): when the call's result is a
// pending promise and requests are in flight, settle waits for the next one to finish (or for
// the call's context: deadline or Interrupt), resolves or rejects its promise (goja runs the
// promise jobs before the resolving function returns), and looks again. So Promise.all over
// requests overlaps them while JavaScript stays on one goroutine, the goja_nodejs event-loop
// pattern without timers. A request's context is the call's, so the call's deadline covers
// its requests and an interrupted call cancels them; when the call ends, the requests it did
// not await are cancelled and joined (fetchModule.reset, from end): none outlives its call.
// Options.OnRequest hears of each request (method, host, path without the query, status,
// duration, bytes, error kind) for metrics and traces.
//
// The request timeout and AbortSignal.timeout run on Options.Clock (fetchclock.go): the wall
// clock in the runner, the virtual clock in the offline harness. An HTTP client that answers
// on that clock (the harness's routes with a delay) declares each request it holds
// (HoldRequest); a call whose executor waits on nothing but held requests is parked, and
// Options.OnParked is told when it starts and stops being so, under the fetch module's lock,
// so that a harness counts it idle until it moves the clock. Whatever ends a held request — a
// timer of the clock, an abort, its goroutine's end — releases the hold first.
//
// # Globals
//
// Inside a Script, the runtime wrapper (instance) only runs the lifecycle and the calls:
// init, begin/end, call, settle and the handlers. Each global is a type of its own, as in
// goja_nodejs and k6: consoleModule, logModule, utilModule, k8sModule, ctxObject (the
// handlers' ctx, with cacheObject for ctx.cache) and defineScript, created by installGlobals.
// Each holds a callEnv (env.go), the one thing they share with the instance: the runtime, the
// built-ins captured before the script ran, and the Go errors thrown during the current call;
// and only what else it needs (the logger, the Client and the call's context, the current
// Event). All of them, like the runtime, are used only on the executor goroutine.
//
// # Admission
//
// A definition may export validate(obj, ctx) and mutate(obj, ctx) and configure them with
// `admission` (admission.go: operations, failurePolicy, timeoutSeconds, mode, validated at
// load with file:line; AdmissionSpec.CallLimits derives the deadline of the runtimes that serve
// them, below the webhook's timeoutSeconds). Script.Validate and Script.Mutate (admit.go) run
// them like any handler, on the Script's runtime under its deadline, with the admission ctx
// (admitctx.go: operation, oldObject, userInfo, dryRun, subResource, resource, namespace, name,
// script, cache), and read the result under the same deadline: Validation, or the changed
// object decoded from its JSON form (nil for no change). What a denial, a throw or a timeout
// means to the API server (mode, failurePolicy, the JSON Patch) is the caller's business.
//
// # Side effects
//
// Some calls must change nothing outside their runtime: validate and mutate, whose webhooks are
// registered with sideEffects: None. There is one mechanism for it (effects.go): such a call
// names itself in callEnv.pure for its duration, and every binding with side effects calls
// callEnv.sideEffect(fn) before doing anything, which then throws an Error wrapping
// ErrSideEffect ("k8s.create in validate: side effects are not allowed here: ..."). The k8s
// writes, k8s.event, the finalizer helpers and fetch do; so must any new binding with side
// effects. Reads (k8s.get, k8s.list, ctx.cache), console, log and util are allowed.
//
// A weaker rule keeps network I/O out of calls that must be fast and deterministic: index
// functions, enqueue functions, a module's top level and the definition start with
// instance.beginPure(name, what) instead of begin, which sets callEnv.noEffects to what (the
// call's end clears it); fetch checks it and throws "fetch is not allowed in <what>: ...".
// k8s calls stay allowed there, as they were before fetch.
//
// # Metrics
//
// A definition's `metrics` declares Prometheus families (metrics.go), validated at load with
// file:line like the rest. Collect calls a family's collect(ctx) and reads its samples with a
// series limit and bounded label values (collect.go); ctx.metrics (metricsctx.go) hands
// handlers one object per family without collect, whose calls go to the Event's Metrics, the
// caller's (the engine keeps and serves the series). Names shared across scripts are the
// caller's to check: MetricSpec carries each family's line for that.
//
// # Limits
//
// Values crossing from JS into Go are walked with a budget (limits.go: elements, characters,
// depth) and built-ins that loop over a length are wrapped to refuse huge ones up front
// (guard.go); both throw a catchable RangeError, so no script value can make the process
// allocate without bound or spin in a built-in the deadline cannot stop.
//
// # Objects
//
// Objects passed in are never mutated, by this package or by scripts: scripts see read-only
// views (JSON.stringify, spread, Object.keys and array methods work; any write throws a
// TypeError pointing at util.clone). Views read the caller's maps lazily, so an object must not
// be mutated after it is passed in (informer cache objects never are); a view a script keeps
// past the call keeps its object alive. ctx is valid only during its call.
//
// # Errors
//
// Every error that originates in a script is a *ScriptError: syntax errors, definition
// errors, uncaught exceptions and rejections, timeouts, interrupts and recovered panics. Its
// File:Line:Column point into the original source (TypeScript included) and Stack holds the
// JS stack. In a bundle, File is the file the position is in: the script or one of its
// modules (relative to the scripts folder), and each stack frame names its own file. The cause
// is available to errors.Is/As: ErrSyntax, ErrInvalidDefinition, ErrTimeout, ErrInterrupted,
// ErrPanic, ErrStuck, or the Go error (such as a Kubernetes API status
// error) behind an uncaught exception thrown by a binding. A panic in Go code called from JS
// becomes a JS exception (catchable, wrapping ErrPanic); it never crashes the caller.
package scripting
