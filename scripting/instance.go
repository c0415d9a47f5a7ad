package scripting

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/internal/netguard"
)

// maxCallStackSize turns runaway recursion into a RangeError long before it costs real memory.
const maxCallStackSize = 4096

// instance is one goja runtime of a Script and the definition it exported: its lifecycle
// (init, stop) and its calls (begin, call, end, the handlers). The globals' bindings are types
// of their own (env.go), sharing the runtime with it through the embedded callEnv. It is
// driven by its executor goroutine (executor.go): every field below the executor's, and every
// binding, is touched only there, except through stop, which is safe from any goroutine.
type instance struct {
	*callEnv // rt, the captured built-ins, the Go errors thrown during the call
	name     string
	log      *slog.Logger
	client   Client
	store    Store
	outbox   Outbox
	timeout  time.Duration
	now      func() time.Time // Options.Now; nil is the wall clock
	dog      *watchdog

	// base is cancelled by stop; callCtx is derived per call, lazily, for k8s calls (context).
	base       context.Context
	cancelBase context.CancelFunc
	callCtx    context.Context
	cancelCall context.CancelFunc

	exec executor

	def         Definition
	defObj      *goja.Object
	onAdd       goja.Callable
	onUpdate    goja.Callable
	onDelete    goja.Callable
	reconcileFn goja.Callable
	validateFn  goja.Callable
	mutateFn    goja.Callable
	// validateLine and mutateLine are where the definition writes them: the line a result of
	// theirs that breaks the contract is reported at (resultError).
	validateLine, mutateLine int
	indexers                 map[string]indexer
	// indexersObj is `this` for index functions, as in def.indexers.name(obj).
	indexersObj *goja.Object
	scheduleFns []goja.Callable       // schedule[i].run
	enqueueFns  map[int]goja.Callable // watch[i].enqueue, when a function
	collectFns  map[string]collectFn  // metrics[name].collect, by family name
	deliverFn   goja.Callable         // outbox.deliver
	outboxObj   *goja.Object          // `this` for deliver: the definition's outbox

	// Per-call state, reset when the call ends (the event is ctx's, the thrown errors callEnv's).
	callName string
	// callLimit is how long the call may run: the timeout, or less for an admission call whose
	// request is due sooner (beginBy); byRequest says which.
	callLimit time.Duration
	byRequest bool
	// resultLine is the line resultError reports: the function's, for an admission call; 0
	// (none) for others.
	resultLine int

	fetch   *fetchModule   // fetch's requests of the current call (fetch.go)
	netList *netguard.List // the definition's `net`, nil when it declares none

	ctx       *ctxObject   // the handlers' ctx; its ev is the current call's event
	admission *admitCtx    // validate's and mutate's ctx, made on first use (admitctx.go)
	ctxObj    *goja.Object // ctx as scripts see it

	// batchFn calls runBatchFn (runBatch) from a JS frame, so that its calls are nested;
	// both made on first use (indexbatch.go).
	batchFn    goja.Callable
	runBatchFn goja.Value
	batch      *indexBatch   // the batch runBatch works on, during indexBatch only
	args       [3]goja.Value // a handler call's arguments (handleNext), cleared after each call
	jobsArmed  bool          // runBatch armed the deadline for the batch's promise jobs
}

type indexer struct {
	fn    goja.Callable
	label string // "indexers.<name>", for messages
}

// newInstance creates a runtime without running anything in it; init, on the executor, does.
func newInstance(name string, opts Options, log *slog.Logger, stuck *atomic.Int32) *instance {
	s := &instance{callEnv: newCallEnv(goja.New()), name: name, client: opts.Client, store: opts.Store, outbox: opts.Outbox, timeout: opts.Timeout, now: opts.Now, log: log}
	s.fetch = newFetch(s.callEnv, opts, s.context, func() *netguard.List { return s.netList })
	if opts.Now != nil {
		s.rt.SetTimeSource(opts.Now) // Date follows the engine's clock (virtual in offline tests)
	}
	s.rt.SetMaxCallStackSize(maxCallStackSize)
	s.exec = newExecutor(stuck)
	s.dog = newWatchdog(s.rt, opts.Grace, s.exec.done)
	s.base, s.cancelBase = context.WithCancel(context.Background())
	return s
}

func (s *instance) init(p *Program) error {
	if err := s.installGlobals(); err != nil {
		return &ScriptError{File: s.name, Message: "install globals: " + err.Error(), Err: err}
	}
	exports, err := s.runModule(p.prg)
	if err != nil {
		return err
	}
	return s.loadDefinition(exports, p.src)
}

// stop interrupts the running call, fails every later one and ends the executor once it is
// idle. Safe from any goroutine; idempotent.
func (s *instance) stop() {
	s.dog.kill()
	s.cancelBase()
	s.exec.quit()
}

// begin arms the deadline for a call named name; every successful begin is paired with a
// deferred end.
func (s *instance) begin(name string) error {
	return s.arm(name, s.timeout, false)
}

// beginBy is begin for a call whose answer is due at deadline (zero: none): it is not
// started once deadline has passed, and otherwise runs under the shorter of its timeout and
// the time left, so that its caller answers in time.
func (s *instance) beginBy(name string, deadline time.Time) error {
	if deadline.IsZero() {
		return s.begin(name)
	}
	left := time.Until(deadline)
	if left <= 0 {
		return &ScriptError{File: s.name, Err: ErrTimeout, Message: name + " not started: the request's deadline had passed"}
	}
	return s.arm(name, min(s.timeout, left), left < s.timeout)
}

func (s *instance) arm(name string, limit time.Duration, byRequest bool) error {
	if !s.dog.arm(limit) {
		return s.interruptedError(name)
	}
	s.callName, s.callLimit, s.byRequest, s.resultLine = name, limit, byRequest, 0
	return nil
}

// beginPure is begin for a call that must be free of side effects: bindings that have some
// (fetch) throw an error naming what, such as "index functions". It is the one switch for
// every such call; see "Side effects" in doc.go.
func (s *instance) beginPure(name, what string) error {
	if err := s.begin(name); err != nil {
		return err
	}
	s.noEffects = what
	return nil
}

func (s *instance) interruptedError(name string) error {
	return interruptedError(s.name, name)
}

func interruptedError(file, call string) error {
	return &ScriptError{File: file, Message: call + ": " + ErrInterrupted.Error(), Err: ErrInterrupted}
}

// end disarms the deadline and releases per-call state. A panic that escaped goja (a bug, as
// bindings convert theirs into exceptions) becomes the call's error instead of crashing.
func (s *instance) end(err *error) {
	if r := recover(); r != nil {
		*err = s.recovered(r)
	}
	s.dog.disarm()
	if s.cancelCall != nil {
		s.cancelCall()
		s.callCtx, s.cancelCall = nil, nil
	}
	s.fetch.reset() // after the cancel: joins the call's requests, which it ended
	s.endCall()
	s.ctx.ev = Event{}
}

// context is the context Go callbacks receive: cancelled at the call's deadline or on stop.
func (s *instance) context() context.Context {
	if s.callCtx == nil {
		s.callCtx, s.cancelCall = context.WithDeadline(s.base, s.dog.callDeadline())
	}
	return s.callCtx
}

// call runs fn with this and settles a returned promise.
func (s *instance) call(this goja.Value, fn goja.Callable, args ...goja.Value) (goja.Value, error) {
	v, err := fn(this, args...)
	if err != nil {
		return nil, s.scriptError(err)
	}
	return s.settle(v)
}
