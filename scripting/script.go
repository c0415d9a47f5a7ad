package scripting

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTimeout is the per-call deadline when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// Options configure one instance of a Program.
type Options struct {
	// Logger receives console.* and log.* output, tagged script=<name>. Nil discards it.
	Logger *slog.Logger
	// Timeout bounds every call, including the module's top-level evaluation. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Grace is how long past its Timeout (or past Interrupt) a call may take to stop before
	// it is declared stuck and its runtime abandoned. Zero means DefaultGrace.
	Grace time.Duration
	// Client backs the k8s global. Nil makes every k8s.* call throw.
	Client Client
	// Now, when set, is the clock of Date and Date.now(); the offline harness passes its
	// virtual clock. Deadlines (Timeout) always run on the real clock.
	Now func() time.Time
	// HTTP backs fetch; nil makes fetch throw. The runner passes a *netguard.Limited (its
	// allow list and limits, with the script's concurrency limit), the offline harness routes.
	HTTP HTTPClient
	// OnRequest, when set, is told of every request a call made, when it is settled or the
	// call ends, on the Script's goroutine; it must not block.
	OnRequest func(RequestRecord)
	// Clock runs fetch's timeouts (the request timeout, AbortSignal.timeout); nil is the wall
	// clock. The offline harness passes its virtual clock. The call's deadline (Timeout) is
	// always on the wall clock.
	Clock FetchClock
	// OnParked, when set, is told +1 when a call starts waiting on nothing but requests its
	// HTTP client holds for Clock (HoldRequest), and -1 when it stops: the offline harness
	// counts such a call as idle until it moves the clock. Called from any goroutine, with a
	// lock of the call's held; it must not block.
	OnParked func(delta int)
	// Store backs ctx.store: the script's own store. Nil makes every ctx.store call throw.
	Store Store
	// Outbox backs ctx.outbox.send: the script's outbox. Nil makes send throw.
	Outbox Outbox
}

// Script is one instance of a Program as its owner sees it: the definition it exported and
// the runtime its calls run on. All methods except Interrupt must be called from a single
// goroutine at a time (the owner). The runtime itself lives on a goroutine of the Script's
// (executor.go), replaced by a fresh one when a call gets stuck.
type Script struct {
	name    string
	prog    *Program
	opts    Options
	timeout time.Duration
	grace   time.Duration
	log     *slog.Logger
	def     Definition
	stuck   atomic.Int32 // abandoned runtimes whose call is still running
	mem     memory
	idx     *indexBatch // IndexAll's buffers, reused while no hand-over was abandoned
	// next is the handler call being handed over, read by handleNext (handlers.go); handle
	// is handleNext bound once, so a call allocates no closure.
	next   handlerCall
	handle func(*instance) error

	mu       sync.Mutex
	cur      *instance // nil after an abandonment, until the next call starts a fresh one
	isKilled bool
	killed   chan struct{} // closed by Interrupt
}

// Instantiate creates a runtime, evaluates the module and validates its definition. The
// returned Script belongs to the calling goroutine from now on; Close releases it.
func (p *Program) Instantiate(opts Options) (*Script, error) {
	s := newScript(p, opts)
	in, err := s.start()
	if err != nil {
		s.Interrupt()
		return nil, err
	}
	s.def = in.def
	return s, nil
}

func newScript(p *Program, opts Options) *Script {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Script{name: p.name, prog: p, opts: opts, timeout: opts.Timeout, grace: opts.Grace,
		log: logger.With("script", p.name), killed: make(chan struct{})}
	s.handle = s.handleNext
	return s
}

// start makes a new instance current and runs the module in it. The module and the
// definition are two calls, each with its own deadline.
func (s *Script) start() (*instance, error) {
	in := newInstance(s.name, s.opts, s.log, &s.stuck)
	s.mu.Lock()
	if s.isKilled {
		s.mu.Unlock()
		return nil, interruptedError(s.name, "module")
	}
	s.cur = in // so that Interrupt reaches it
	s.mu.Unlock()
	go in.serve()
	err := s.exec(in, "module", func(in *instance) error { return in.init(s.prog) })
	if err != nil {
		s.drop(in)
		return nil, err
	}
	return in, nil
}

// drop stops in and forgets it, unless it was abandoned already.
func (s *Script) drop(in *instance) {
	s.mu.Lock()
	if s.cur == in {
		s.cur = nil
	}
	s.mu.Unlock()
	in.stop()
}

// instance returns the current instance, starting a fresh one after an abandonment.
func (s *Script) instance(name string) (*instance, error) {
	s.mu.Lock()
	in, killed := s.cur, s.isKilled
	s.mu.Unlock()
	switch {
	case killed:
		return nil, interruptedError(s.name, name)
	case in != nil:
		return in, nil
	}
	if n := s.stuck.Load(); n >= maxStuck {
		return nil, &ScriptError{File: s.name, Err: ErrStuck, Message: fmt.Sprintf(
			"%s not run: %d abandoned runtimes of this script are still stuck", name, n)}
	}
	in, err := s.start()
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(in.def, s.def) {
		s.drop(in)
		return nil, &ScriptError{File: s.name, Err: ErrInvalidDefinition, Message: name +
			" not run: the fresh runtime's definition differs from the one loaded"}
	}
	s.log.Warn("script runtime replaced after a stuck call; module-level state starts afresh")
	return in, nil
}

// run runs call on the current instance; it returns within Timeout+Grace.
func (s *Script) run(name string, call func(*instance) error) error {
	in, err := s.instance(name)
	if err != nil {
		return err
	}
	err = s.exec(in, name, call)
	s.measureIfWanted(in)
	return err
}

// Name is the script's file name.
func (s *Script) Name() string { return s.name }

// Definition is what the script exported, validated. The caller may keep and modify it.
func (s *Script) Definition() Definition {
	d := s.def
	d.Watch = slices.Clone(d.Watch)
	d.Indexers = slices.Clone(d.Indexers)
	d.Metrics = slices.Clone(d.Metrics)
	d.Admission.Operations = slices.Clone(d.Admission.Operations)
	d.Admission.Subresources = slices.Clone(d.Admission.Subresources)
	d.Net = slices.Clone(d.Net)
	if d.Outbox != nil {
		spec := *d.Outbox
		d.Outbox = &spec
	}
	return d
}

// Interrupt stops the current call, if any, and makes every later call fail with
// ErrInterrupted. It cancels the context of a Go callback in progress; a call that does not
// stop within Grace is abandoned. Safe from any goroutine; it does not wait.
func (s *Script) Interrupt() {
	s.mu.Lock()
	if !s.isKilled {
		s.isKilled = true
		close(s.killed)
	}
	in := s.cur
	s.mu.Unlock()
	if in != nil {
		in.stop()
	}
}

// Close interrupts the Script, waits for its runtime's goroutine to end (an abandoned one
// is not waited for) and lets go of the runtime, so a closed Script kept by someone holds none
// of the script's memory. Only the owner may call it, with no call in progress; idempotent.
func (s *Script) Close() {
	s.Interrupt()
	s.mu.Lock()
	in := s.cur
	s.mu.Unlock()
	if in != nil {
		<-in.exec.exited
	}
	s.mu.Lock()
	s.cur = nil // the runtime, and all the script made in it, goes with the next collection
	s.mu.Unlock()
}

// noop is the result of calling a handler the script does not define: nothing, unless the
// script was interrupted, after which every call fails alike.
func (s *Script) noop(name string) error {
	select {
	case <-s.killed:
		return interruptedError(s.name, name)
	default:
		return nil
	}
}
