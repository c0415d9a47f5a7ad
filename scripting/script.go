package scripting

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// DefaultTimeout is the per-call deadline when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// maxCallStackSize turns runaway recursion into a RangeError long before it costs real memory.
const maxCallStackSize = 4096

// Options configure one instance of a Program.
type Options struct {
	// Logger receives console.* and log.* output, tagged script=<name>. Nil discards it.
	Logger *slog.Logger
	// Timeout bounds every call, including the module's top-level evaluation. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Client backs the k8s global. Nil makes every k8s.* call throw.
	Client Client
	// Now, when set, is the clock of Date and Date.now(); the offline harness passes its
	// virtual clock. Deadlines (Timeout) always run on the real clock.
	Now func() time.Time
}

// Script is one instance of a Program: one goja runtime and the definition it exported. All
// methods except Interrupt must be called from a single goroutine at a time (the owner).
type Script struct {
	name    string
	rt      *goja.Runtime
	log     *slog.Logger
	client  Client
	timeout time.Duration
	dog     *watchdog
	// interrupted mirrors the watchdog's kill for calls that run no JS.
	interrupted atomic.Bool

	// base is cancelled by Interrupt; callCtx is derived per call, lazily, for Go callbacks.
	base       context.Context
	cancelBase context.CancelFunc
	callCtx    context.Context
	cancelCall context.CancelFunc

	def         Definition
	defObj      *goja.Object
	onAdd       goja.Callable
	onUpdate    goja.Callable
	onDelete    goja.Callable
	reconcileFn goja.Callable
	indexers    map[string]indexer
	// indexersObj is `this` for index functions, as in def.indexers.name(obj).
	indexersObj *goja.Object

	// Per-call state, reset when the call ends.
	callName string
	ev       Event
	goErrs   map[*goja.Object]error // Go errors behind the JS errors thrown during this call

	ctxObj    *goja.Object // the handlers' ctx argument, one object reading s.ev
	internals internals
}

type indexer struct {
	fn    goja.Callable
	label string // "indexers.<name>", for messages
}

// Instantiate creates a runtime, evaluates the module and validates its definition. The
// returned Script belongs to the calling goroutine from now on.
func (p *Program) Instantiate(opts Options) (*Script, error) {
	s := newScript(p.name, opts)
	if err := s.init(p); err != nil {
		s.Interrupt()
		return nil, err
	}
	return s, nil
}

func newScript(name string, opts Options) *Script {
	s := &Script{name: name, rt: goja.New(), client: opts.Client, timeout: opts.Timeout}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s.log = logger.With("script", name)
	s.rt.SetMaxCallStackSize(maxCallStackSize)
	if opts.Now != nil {
		s.rt.SetTimeSource(opts.Now)
	}
	s.dog = newWatchdog(s.rt)
	s.base, s.cancelBase = context.WithCancel(context.Background())
	return s
}

func (s *Script) init(p *Program) error {
	if err := s.installGlobals(); err != nil {
		return &ScriptError{File: s.name, Message: "install globals: " + err.Error(), Err: err}
	}
	exports, err := s.runModule(p.prg)
	if err != nil {
		return err
	}
	return s.loadDefinition(exports, p.src)
}

// Name is the script's file name.
func (s *Script) Name() string { return s.name }

// Definition is what the script exported, validated. The caller may keep and modify it.
func (s *Script) Definition() Definition {
	d := s.def
	d.Watch = slices.Clone(d.Watch)
	d.Indexers = slices.Clone(d.Indexers)
	return d
}

// Interrupt stops the current call, if any, and makes every later call fail with
// ErrInterrupted. It cancels the context of a Go callback in progress. Safe from any goroutine.
func (s *Script) Interrupt() {
	s.interrupted.Store(true)
	s.dog.kill()
	s.cancelBase()
}

// begin arms the deadline for a call named name; every successful begin is paired with a
// deferred end.
func (s *Script) begin(name string) error {
	if !s.dog.arm(s.timeout) {
		return s.interruptedError(name)
	}
	s.callName = name
	return nil
}

// noop is the result of calling a handler the script does not define: nothing, unless the
// script was interrupted, after which every call fails alike.
func (s *Script) noop(name string) error {
	if s.interrupted.Load() {
		return s.interruptedError(name)
	}
	return nil
}

func (s *Script) interruptedError(name string) error {
	return &ScriptError{File: s.name, Message: name + ": " + ErrInterrupted.Error(), Err: ErrInterrupted}
}

// end disarms the deadline and releases per-call state. A panic that escaped goja (a bug, as
// bindings convert theirs into exceptions) becomes the call's error instead of crashing.
func (s *Script) end(err *error) {
	if r := recover(); r != nil {
		*err = s.recovered(r)
	}
	s.dog.disarm()
	if s.cancelCall != nil {
		s.cancelCall()
		s.callCtx, s.cancelCall = nil, nil
	}
	if len(s.goErrs) > 0 {
		clear(s.goErrs)
	}
	s.ev = Event{}
}

// context is the context Go callbacks receive: cancelled at the call's deadline or on Interrupt.
func (s *Script) context() context.Context {
	if s.callCtx == nil {
		s.callCtx, s.cancelCall = context.WithDeadline(s.base, s.dog.callDeadline())
	}
	return s.callCtx
}

// call runs fn with this and settles a returned promise.
func (s *Script) call(this goja.Value, fn goja.Callable, args ...goja.Value) (goja.Value, error) {
	v, err := fn(this, args...)
	if err != nil {
		return nil, s.scriptError(err)
	}
	return s.settle(v)
}
