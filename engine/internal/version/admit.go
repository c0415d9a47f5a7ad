package version

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// Admission: validate and mutate run on runtimes of their own (an admitPool), never on the
// worker, so a busy handler or reconcile does not delay an answer the API server waits for,
// and several requests are answered at once. Every replica serves them, standbys included.

// admissionRuntimes is how many admission calls one version runs at once; a request finding
// them all busy waits for one until its deadline.
const admissionRuntimes = 2

// ErrRetired is returned once the version no longer takes admission calls; the one serving
// the script now does.
var ErrRetired = errors.New("script version retired")

// admitPool is a version's admission runtimes. Any goroutine may call do; a runtime is used
// by the one call holding it, taken from and given back to free. close stops new calls,
// waits for those holding or waiting for a runtime, then closes the runtimes.
type admitPool struct {
	free    chan *scripting.Script
	all     []*scripting.Script
	mu      sync.Mutex
	closing bool
	closed  chan struct{} // closed by close: waiting calls give up
	calls   sync.WaitGroup
}

// newAdmitPool instantiates the admission runtimes, with the deadline the script's
// admission options allow.
func newAdmitPool(cfg Config) (*admitPool, error) {
	opts := cfg.Options
	opts.Timeout, opts.Grace = cfg.Def.Admission.CallLimits(cfg.Options.Timeout)
	p := &admitPool{free: make(chan *scripting.Script, admissionRuntimes), closed: make(chan struct{})}
	for range admissionRuntimes {
		s, err := cfg.Program.Instantiate(opts)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("instantiate admission runtime: %w", err)
		}
		p.all = append(p.all, s)
		p.free <- s
	}
	return p, nil
}

// do runs fn on a free runtime. It starts nothing once ctx has ended, waits for a runtime
// until ctx's deadline and not past the pool's close; the call itself ends by that deadline
// (AdmissionRequest.Deadline), so that the caller answers in time.
func (p *admitPool) do(ctx context.Context, fn func(*scripting.Script) error) error {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		return ErrRetired
	}
	p.calls.Add(1)
	p.mu.Unlock()
	defer p.calls.Done()
	s, err := p.take(ctx)
	if err != nil {
		return err
	}
	defer func() { p.free <- s }()
	return fn(s)
}

// take hands out a free runtime, none once ctx has ended: a runtime freed after the
// deadline would start a call whose answer nobody waits for any more.
func (p *admitPool) take(ctx context.Context) (*scripting.Script, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start the call: %w", context.Cause(ctx))
	}
	// ctx's own timer may not have fired yet at its deadline: the clock decides, so that a
	// call is refused here rather than by the runtime an instant later.
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return nil, fmt.Errorf("start the call: %w", context.DeadlineExceeded)
	}
	select {
	case s := <-p.free:
		return s, nil
	default:
	}
	select {
	case s := <-p.free:
		return s, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for a free admission runtime: all %d busy: %w", admissionRuntimes, context.Cause(ctx))
	case <-p.closed:
		return nil, ErrRetired
	}
}

// interrupt stops the calls running (the memory guard's stop); they fail with ErrInterrupted.
func (p *admitPool) interrupt() {
	for _, s := range p.all {
		s.Interrupt()
	}
}

// close takes no new call, lets the running ones finish (each within its deadline and grace)
// and closes the runtimes. Idempotent.
func (p *admitPool) close() {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		return
	}
	p.closing = true
	close(p.closed)
	p.mu.Unlock()
	p.calls.Wait()
	for _, s := range p.all {
		s.Close()
	}
}

// Validate runs the script's validate for req on one of v's admission runtimes, with
// ctx.cache reading v's store. ErrRetired once v is closing: ask the version serving now.
func (v *Version) Validate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Validation, error) {
	if v.admit == nil {
		return scripting.Validation{}, fmt.Errorf("validate %s: the script does not define validate", v.name)
	}
	req.Cache = v.admissionCache(req.Resource)
	req.Deadline, _ = ctx.Deadline()
	var res scripting.Validation
	err := v.admit.do(ctx, func(s *scripting.Script) (err error) {
		res, err = s.Validate(req)
		return err
	})
	return res, err
}

// Mutate runs the script's mutate for req as Validate runs validate.
func (v *Version) Mutate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Object, error) {
	if v.admit == nil {
		return nil, fmt.Errorf("mutate %s: the script does not define mutate", v.name)
	}
	req.Cache = v.admissionCache(req.Resource)
	req.Deadline, _ = ctx.Deadline()
	var out scripting.Object
	err := v.admit.do(ctx, func(s *scripting.Script) (err error) {
		out, err = s.Mutate(req)
		return err
	})
	return out, err
}

// admissionCache is the cache of the watched resource the request is about (the first
// watched one when none matches), with v's indexes.
func (v *Version) admissionCache(resource string) scripting.Cache {
	subs := v.Subscriptions()
	for _, sub := range subs {
		if sub.Cache.Resource == resource {
			return sub.Cache
		}
	}
	if len(subs) > 0 {
		return subs[0].Cache
	}
	return nil
}

// AdmissionIdle is how many of v's admission runtimes wait for a call; 0 without admission.
func (v *Version) AdmissionIdle() int {
	if v.admit == nil {
		return 0
	}
	return len(v.admit.free)
}

// Targets are v's resolved watches, in the definition's order (the webhooks' rules).
func (v *Version) Targets() []Target { return v.targets }
