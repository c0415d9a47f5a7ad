package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/plugins"
)

// OfflineConfig configures an Offline engine. Zero fields take the runner's defaults.
type OfflineConfig struct {
	// ScriptsDir is the folder plugins are loaded from, as --scripts: relative imports and
	// node_modules resolve in it, and Load names plugins relative to it; default ".".
	ScriptsDir string
	// Cluster is the in-memory cluster the engine watches and writes to; required.
	Cluster *memcluster.Cluster
	// Clock is the virtual clock: scripts' Date, reconcile delays and the cluster's
	// timestamps (give the cluster the same clock) follow it, and only Settle and Advance
	// move it; required.
	Clock *clocktesting.FakeClock
	// Resources, Namespace, LabelSelector, FieldSelector, DryRun, FieldManager and
	// HandlerTimeout are the runner's flags of the same names (--gvr, -n, -l, ...).
	Resources     []string
	Namespace     string
	LabelSelector string
	FieldSelector string
	DryRun        bool
	FieldManager  string
	// HandlerTimeout bounds each call, on the real clock; default 5s.
	HandlerTimeout time.Duration
	// Logger receives what the engine and the script log; default discards.
	Logger *slog.Logger
	// OnWrite, when set, is told every write the script sends, after the cluster answered.
	OnWrite func(memcluster.Write)
	// QuietTimeout bounds, on the real clock, each wait for the engine to become quiet; a
	// script that keeps the engine busy longer fails Settle; default 30s.
	QuietTimeout time.Duration
}

// Offline runs one plugin on the runner's engine — compile, validation, informers, store,
// indexes, handlers, reconcile — against an in-memory cluster, on a virtual clock, driven
// step by step: Load, then changes to the cluster, then Settle or Advance. It is the
// engine of `runner test`.
//
// Its methods are called from one goroutine at a time (the test's); that goroutine plays
// the engine's loader. The engine's own goroutines (informers, the version's worker and
// index stage, reconcile workers) run as in the runner; Settle and Advance return only
// when all of them are idle. Close stops them all.
type Offline struct {
	e      *Engine
	cfg    OfflineConfig
	source *barrierSource
	waiter *waiter
}

// offline is what an Offline engine adds to the Engine: the virtual clock and the reconcile
// queues built on it.
type offline struct {
	clock *clocktesting.FakeClock

	mu        sync.Mutex
	queues    []*virtualQueue
	schedules virtualSchedules
}

func (o *offline) newQueue(name string) *virtualQueue {
	q := newVirtualQueue(name, o.clock)
	o.mu.Lock()
	o.queues = append(o.queues, q)
	o.mu.Unlock()
	return q
}

func (o *offline) allQueues() []*virtualQueue {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*virtualQueue(nil), o.queues...)
}

// NewOffline builds an engine on cfg.Cluster. It starts nothing until Load.
func NewOffline(cfg OfflineConfig) (*Offline, error) {
	if cfg.Cluster == nil || cfg.Clock == nil {
		return nil, errors.New("configure offline engine: Cluster and Clock are required")
	}
	if cfg.QuietTimeout <= 0 {
		cfg.QuietTimeout = 30 * time.Second
	}
	ecfg := Config{
		RESTConfig: &rest.Config{}, ScriptsDir: cmp.Or(cfg.ScriptsDir, "."), Resources: cfg.Resources, Namespace: cfg.Namespace,
		LabelSelector: cfg.LabelSelector, FieldSelector: cfg.FieldSelector, DryRun: cfg.DryRun,
		FieldManager: cfg.FieldManager, HandlerTimeout: cfg.HandlerTimeout, Logger: cfg.Logger,
	}
	if err := ecfg.setDefaults(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: ecfg, offline: &offline{clock: cfg.Clock}}
	dyn := cfg.Cluster.Client(cfg.OnWrite)
	factory := dynamicinformer.NewFactory(dyn, dynamicinformer.Options{Logger: ecfg.Logger, OnHealth: e.onHealth})
	source := newBarrierSource(factorySource{factory}, cfg.Cluster)
	e.init(source, dynamicinformer.NewResolver(cfg.Cluster.Discovery(), ecfg.Logger).WithoutThrottle())
	e.dynamic, e.discovery = dyn, cfg.Cluster.Discovery()
	e.client = k8sclient.New(dyn, e.resolver, k8sclient.Options{DryRun: ecfg.DryRun, FieldManager: ecfg.FieldManager,
		Logger: ecfg.Logger, Now: cfg.Clock.Now})
	if err := e.resolveDefaults(); err != nil {
		e.factory.Shutdown()
		return nil, err
	}
	return &Offline{e: e, cfg: cfg, source: source, waiter: &waiter{timeout: cfg.QuietTimeout}}, nil
}

// Load compiles, validates and starts a plugin, as the runner does when it finds the file,
// and returns once it serves: every object the cluster holds has been handed to it as an
// initial add. Errors are the runner's "script not loaded" errors (with file:line:col), or
// the error of a watch the cluster refuses. A plugin loaded again replaces the running
// version as a reload does.
func (o *Offline) Load(ctx context.Context, name string, content []byte) error {
	sum := sha256.Sum256(content)
	src := plugins.Source{Name: name, Content: content, Hash: hex.EncodeToString(sum[:])[:12]}
	v, err := o.e.newVersion(src)
	if err != nil {
		return err
	}
	p := o.e.plugins[name]
	if p == nil {
		p = &plugin{}
		o.e.plugins[name] = p
	}
	if p.pending != nil {
		o.e.retire(p.pending, false)
	}
	p.pending = v
	if err := o.awaitSync(ctx, v); err != nil {
		p.pending = nil
		o.e.retire(v, false)
		return fmt.Errorf("load %s: %w", name, err)
	}
	o.e.onSynced(v)
	return nil
}

// awaitSync waits until v has handled its initial list, or one of its watches fails. The
// waiting goroutine is joined on every path: a version that did not sync is aborted first.
func (o *Offline) awaitSync(ctx context.Context, v *version) error {
	synced := make(chan bool, 1)
	subs := v.subs // the goroutine's copy: retire clears v.subs
	go func() { synced <- v.waitSynced(subs, syncWarnAfter) }()
	var ok, done bool
	var failed error
	err := o.waiter.until(ctx, "the informers to sync", func() bool {
		select {
		case ok = <-synced:
			done = true
			return true
		default:
		}
		failed = o.failingWatch(subs)
		return failed != nil
	})
	if !done {
		v.halt() // waitSynced returns on abort
		ok = <-synced
	}
	switch {
	case failed != nil:
		return failed
	case err != nil:
		return err
	case !ok:
		return errors.New("stopped before it synced")
	}
	return nil
}

// failingWatch is the error of an informer of v that cannot list or watch: the runner would
// wait for it, and say so in its logs and /readyz; a test fails at once.
func (o *Offline) failingWatch(subs []*subscription) error {
	for _, h := range o.e.factory.Health() {
		for _, sub := range subs {
			if h.Key == sub.key && !h.Healthy {
				return fmt.Errorf("watch %s: %s", h.Key, h.LastError)
			}
		}
	}
	return nil
}

// Now is the virtual time.
func (o *Offline) Now() time.Time { return o.cfg.Clock.Now() }

// Settle runs until the engine is quiet: no change left to deliver, no event queued, no key
// queued or being reconciled. Then, while a delayed key (a requeueAfter, a retry's backoff)
// is due within limit of the virtual time Settle started at, it moves the clock to it and
// runs until quiet again. It returns the time the clock was moved by.
func (o *Offline) Settle(ctx context.Context, limit time.Duration) (time.Duration, error) {
	start := o.Now()
	if err := o.quiesce(ctx); err != nil {
		return 0, err
	}
	for range maxTimerRounds {
		due, ok := o.nextDue()
		if !ok || due.After(start.Add(limit)) {
			return o.Now().Sub(start), nil
		}
		if err := o.moveTo(ctx, due); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("settle: still busy after %d rounds of delayed keys; a key that is requeued for ever? use a smaller limit", maxTimerRounds)
}

// maxTimerRounds bounds Settle's rounds, against a reconcile that requeues without end.
const maxTimerRounds = 10000

// Advance moves the virtual clock forward by d, running every delayed key and every schedule
// entry at its due time along the way, in order, and settles (without moving the clock
// further).
func (o *Offline) Advance(ctx context.Context, d time.Duration) error {
	target := o.Now().Add(d)
	if err := o.quiesce(ctx); err != nil {
		return err
	}
	for range maxTimerRounds {
		due, ok := o.nextDue()
		if sched, has := o.e.offline.schedules.next(); has && (!ok || sched.Before(due)) {
			due, ok = sched, true
		}
		if !ok || due.After(target) {
			return o.moveTo(ctx, target)
		}
		if err := o.moveTo(ctx, due); err != nil {
			return err
		}
	}
	return fmt.Errorf("advance: more than %d rounds of delayed keys within %s", maxTimerRounds, d)
}

// moveTo sets the clock to t (never backwards), adds the keys due then and runs until quiet.
func (o *Offline) moveTo(ctx context.Context, t time.Time) error {
	if t.After(o.Now()) {
		o.cfg.Clock.SetTime(t)
	}
	for _, q := range o.e.offline.allQueues() {
		q.fire(o.Now())
	}
	o.e.offline.schedules.fire(o.Now())
	return o.quiesce(ctx)
}

func (o *Offline) nextDue() (time.Time, bool) {
	var first time.Time
	for _, q := range o.e.offline.allQueues() {
		if t, ok := q.next(); ok && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first, !first.IsZero()
}

// quiesce waits until the engine is idle and the cluster unchanged over a whole round: the
// informers have delivered everything (a barrier), the versions have handled it, the
// reconcilers have nothing queued or running, and nobody wrote meanwhile. A plugin whose
// writes keep causing writes (each update answered by another) never gets there: that is an
// error after QuietTimeout.
func (o *Offline) quiesce(ctx context.Context) error {
	deadline := time.Now().Add(o.cfg.QuietTimeout)
	first := o.cfg.Cluster.Writes()
	for {
		writes := o.cfg.Cluster.Writes()
		if err := o.source.flush(ctx, o.waiter); err != nil {
			return err
		}
		if err := o.waiter.until(ctx, "the scripts to handle their events", o.versionsIdle); err != nil {
			return err
		}
		if err := o.waiter.until(ctx, "reconcile to finish its keys", o.reconcilersIdle); err != nil {
			return err
		}
		if o.cfg.Cluster.Writes() == writes {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("settle: the plugin is still writing after %s (%d writes): does each of its writes cause another?",
				o.cfg.QuietTimeout, o.cfg.Cluster.Writes()-first)
		}
	}
}

func (o *Offline) versionsIdle() bool {
	for _, p := range o.e.plugins {
		for _, v := range []*version{p.pending, p.current} {
			if v != nil && (!v.intake.idle() || !v.queue.idle()) {
				return false
			}
		}
	}
	return true
}

func (o *Offline) reconcilersIdle() bool {
	for _, q := range o.e.offline.allQueues() {
		if !q.ShuttingDown() && !q.quiet() {
			return false
		}
	}
	return true
}

// Close stops the plugin and every informer and waits for their goroutines.
func (o *Offline) Close() { o.e.shutdown() }

// waiter polls a condition on the real clock, briefly at first, up to a timeout.
type waiter struct{ timeout time.Duration }

func (w *waiter) until(ctx context.Context, what string, cond func() bool) error {
	deadline := time.Now().Add(w.timeout)
	pause := 20 * time.Microsecond
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s: still busy after %s", what, w.timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Millisecond)
	}
	return nil
}
