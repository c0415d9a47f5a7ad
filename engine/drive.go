package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/plugins"
)

// Driving the engine step by step, instead of Run: a driver (package offline, the engine of
// `runner test`) builds the engine on its own Env with NewDriven and plays the loader from one
// goroutine, calling Load, Idle and Close; never together with Run.

// NewDriven builds an engine on env without contacting anything; cfg.RESTConfig is unused.
func NewDriven(cfg Config, env Env) (*Engine, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg}
	e.init(env)
	if err := e.resolveDefaults(); err != nil {
		e.factory.Shutdown()
		return nil, err
	}
	e.stopDrivenAudits = e.startAudits(context.Background()) // stopped by Close
	return e, nil
}

// Load compiles, validates and subscribes one content of the script name, and returns once
// it serves: it has been handed every cached object as an initial add. A script loaded again
// replaces its running version as a reload does. The error is the runner's "script not loaded"
// error (with file:line:col), the error of a watch that cannot list or watch, or ctx's cause.
func (e *Engine) Load(ctx context.Context, name string, content []byte) error {
	sum := sha256.Sum256(content)
	src := plugins.Source{Name: name, Content: content, Hash: hex.EncodeToString(sum[:])[:12]}
	v, err := e.newVersion(src)
	if err != nil {
		return err
	}
	p := e.plugins[name]
	if p == nil {
		p = &plugin{}
		e.plugins[name] = p
	}
	if p.pending != nil {
		e.retire(p.pending, false)
	}
	p.pending = v
	if err := e.awaitSync(ctx, v); err != nil {
		p.pending = nil
		e.retire(v, false)
		return fmt.Errorf("load %s: %w", name, err)
	}
	e.onSynced(v)
	return nil
}

// awaitSync waits until v has handled its initial list, or one of its watches fails, or ctx
// ends. The waiting goroutine is joined on every path: a version that did not sync is halted
// first.
func (e *Engine) awaitSync(ctx context.Context, v *loaded) error {
	synced := make(chan bool, 1)
	go func() { synced <- v.ver.WaitSynced(syncWarnAfter) }()
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case ok := <-synced:
			if !ok {
				return fmt.Errorf("stopped before it synced")
			}
			return nil
		case <-ctx.Done():
			v.ver.Halt() // WaitSynced returns on abort
			<-synced
			return context.Cause(ctx)
		case <-poll.C:
			if err := e.failingWatch(v.ver.Subscriptions()); err != nil {
				v.ver.Halt()
				<-synced
				return err
			}
		}
	}
}

// failingWatch is the error of an informer of subs that cannot list or watch: Run would wait
// for it, and say so in its logs and /readyz; a driver fails at once.
func (e *Engine) failingWatch(subs []*version.Subscription) error {
	for _, h := range e.factory.Health() {
		for _, sub := range subs {
			if h.Key == sub.Key && !h.Healthy {
				return fmt.Errorf("watch %s: %s", h.Key, h.LastError)
			}
		}
	}
	return nil
}

// Idle reports that every live version has handled every event queued for it and waits for
// the next, and that every audit (admission.audit) has finished its initial pass and audited
// every change; it says nothing of reconcile queues, which belong to the Env's Clock.
func (e *Engine) Idle() bool {
	if !e.audits.Load().idle() {
		return false
	}
	for _, p := range e.plugins {
		for _, v := range []*loaded{p.pending, p.current} {
			if v != nil && !v.ver.QueuesIdle() {
				return false
			}
		}
	}
	return true
}

// Workers reports the version workers that are busy — handling an event, a schedule or a
// collect, or between two, rather than waiting on an empty queue — and whether any version
// holds work a waiting worker (or its index stage) is about to take. A driver that knows
// how many calls are parked (Env.OnParked) tells from it whether every busy worker is parked.
func (e *Engine) Workers() (busy int, pending bool) {
	for _, p := range e.plugins {
		for _, v := range []*loaded{p.pending, p.current} {
			if v == nil {
				continue
			}
			b, q := v.ver.WorkerState()
			if b {
				busy++
			}
			pending = pending || q
		}
	}
	return busy, pending
}

// ReportHealth is the informers' health sink (dynamicinformer.Options.OnHealth) for a
// driver's factory: logged with the scripts concerned, as Run's are.
func (e *Engine) ReportHealth(ev dynamicinformer.HealthEvent) { e.onHealth(ev) }

// Close stops every version at once — the calls running are interrupted and what is queued is
// skipped: the driver's run is over, and a call waiting on a request nothing will answer must
// not hold it up until its deadline — then every informer, and waits for their goroutines.
// The audits stop first: they read the versions' informers.
func (e *Engine) Close() {
	if e.stopDrivenAudits != nil {
		e.stopDrivenAudits()
	}
	for _, p := range e.plugins {
		for _, v := range []*loaded{p.pending, p.current} {
			if v != nil {
				e.drop(v)
			}
		}
	}
	e.shutdown()
}
