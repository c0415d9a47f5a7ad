package offline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
	"github.com/jsinformer/jsinformer/store"
)

// Config configures a Harness. Zero fields take the runner's defaults.
type Config struct {
	// ScriptsDir is the folder plugins are loaded from, as --scripts: relative imports and
	// node_modules resolve in it, and Load names plugins relative to it; default ".".
	ScriptsDir string
	// Cluster is the in-memory cluster the engine watches and writes to; required.
	Cluster *memcluster.Cluster
	// Clock is the virtual clock: scripts' Date, reconcile delays, schedules and the cluster's
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
	// OnCall, when set, is told the permission each k8s call of the script used, reads
	// included (engine.Config.ObserveCalls).
	OnCall func(permissions.Need, error)
	// Fetch returns the client a script's fetch goes through (engine.Config.Fetch): the test
	// harness's routes; nil refuses every request. A client that answers on the virtual clock
	// (AfterFunc) declares the requests it holds (scripting.HoldRequest), so that a call
	// waiting on them counts as idle.
	Fetch func(script string) scripting.HTTPClient
	// QuietTimeout bounds, on the real clock, each wait for the engine to become quiet; a
	// script that keeps the engine busy longer fails Settle; default 30s.
	QuietTimeout time.Duration
	// OnAdmission, when set, is told what the admission scripts answered for each write to the
	// cluster: once the mutating webhooks have answered (kind "mutate": their calls, their patch
	// and the object they left) and once the validating ones have (kind "validate"; only for a
	// write that gets that far: not after a mutating webhook's denial or the server's own
	// refusal), on the writer's goroutine, before the write goes on.
	// `runner check` reads each manifest's decisions so (package check).
	OnAdmission func(kind string, req AdmissionRequest, res AdmissionResult)
}

// Harness runs plugins on the runner's engine — compile, validation, informers, store,
// indexes, handlers, reconcile, schedules, admission — against an in-memory cluster, on a
// virtual clock, driven step by step: Load, then changes to the cluster, then Settle or
// Advance. It is the engine of `runner test`: the plugin under test, and the admission scripts
// whose validate and mutate admit the cluster's writes (admission.go).
//
// Its methods are called from one goroutine at a time (the test's); that goroutine plays
// the engine's loader. The engine's own goroutines (informers, the version's worker, index
// stage and scheduler, reconcile workers) run as in the runner; Settle and Advance return
// only when all of them are idle. Close stops them all.
type Harness struct {
	e      *engine.Engine
	cfg    Config
	clock  *virtualClock
	source *barrierSource
	waiter *waiter
	parked parkCount
	admit  *admitter // admission.go: the cluster's admission hook and Admit
	// store is ctx.store's: in memory (store.Memory), TTLs on the virtual clock.
	store *store.Store
}

// New builds an engine on cfg.Cluster. It starts nothing until Load.
func New(cfg Config) (*Harness, error) {
	if cfg.Cluster == nil || cfg.Clock == nil {
		return nil, errors.New("configure offline engine: Cluster and Clock are required")
	}
	cfg.QuietTimeout = cmp.Or(cfg.QuietTimeout, 30*time.Second)
	h := &Harness{cfg: cfg, clock: newVirtualClock(cfg.Clock), waiter: &waiter{timeout: cfg.QuietTimeout}}
	dyn := cfg.Cluster.Client(cfg.OnWrite)
	// The informers start with the first Load, after h.e is set.
	factory := dynamicinformer.NewFactory(dyn, dynamicinformer.Options{Logger: cfg.Logger,
		OnHealth: func(ev dynamicinformer.HealthEvent) { h.e.ReportHealth(ev) }})
	h.source = newBarrierSource(engine.FactoryInformers(factory), cfg.Cluster)
	resolver := dynamicinformer.NewResolver(cfg.Cluster.Discovery(), cfg.Logger).WithoutThrottle()
	client := k8sclient.New(dyn, resolver, k8sclient.Options{DryRun: cfg.DryRun, FieldManager: cfg.FieldManager,
		Logger: cfg.Logger, Now: cfg.Clock.Now})
	ecfg := engine.Config{
		ScriptsDir: cmp.Or(cfg.ScriptsDir, "."), Resources: cfg.Resources, Namespace: cfg.Namespace,
		LabelSelector: cfg.LabelSelector, FieldSelector: cfg.FieldSelector, DryRun: cfg.DryRun,
		FieldManager: cfg.FieldManager, HandlerTimeout: cfg.HandlerTimeout, Logger: cfg.Logger,
		ObserveCalls: cfg.OnCall, Fetch: cfg.Fetch,
		// A test's scrape (Metrics) waits for the collects as long as the harness waits for
		// anything, not the runner's short scrape deadline: on a loaded machine a collect must
		// not vanish from a test's h.metrics().
		MetricCollectTimeout: cfg.QuietTimeout,
	}
	var err error
	if h.store, err = newStore(cfg); err != nil {
		return nil, err
	}
	env := engine.Env{Informers: h.source, Resolver: resolver, Clock: h.clock,
		Client: func(logger *slog.Logger) scripting.Client { return client.WithLogger(logger) }, OnParked: h.parked.add,
		Store: h.store}
	if h.e, err = engine.NewDriven(ecfg, env); err != nil {
		factory.Shutdown()
		h.store.Close()
		return nil, err
	}
	h.admit = newAdmitter(h.e, cfg)
	cfg.Cluster.SetAdmission(clusterHook{h.admit})
	return h, nil
}

// Load compiles, validates and starts a plugin, as the runner does when it finds the file,
// and returns once it serves: every object the cluster holds has been handed to it as an
// initial add. Errors are the runner's "script not loaded" errors (with file:line:col), or
// the error of a watch the cluster refuses. A plugin loaded again replaces the running
// version as a reload does.
func (h *Harness) Load(ctx context.Context, name string, content []byte) error {
	ctx, cancel := context.WithTimeoutCause(ctx, h.cfg.QuietTimeout,
		fmt.Errorf("wait for the informers to sync: still busy after %s", h.cfg.QuietTimeout))
	defer cancel()
	return h.e.Load(ctx, name, content)
}

// Status is the engine's state.
func (h *Harness) Status() status.Status { return h.e.Status() }

// Metrics is a scrape of the plugin's metric families (engine.GatherScriptMetrics): what
// `runner test`'s h.metrics() reads.
func (h *Harness) Metrics() ([]*dto.MetricFamily, error) { return h.e.GatherScriptMetrics() }

// Now is the virtual time.
func (h *Harness) Now() time.Time { return h.cfg.Clock.Now() }

// Settle runs until the engine is quiet: no change left to deliver, no event queued, no key
// queued or being reconciled. Then, while a delayed key (a requeueAfter, a retry's backoff)
// is due within limit of the virtual time Settle started at, it moves the clock to it and
// runs until quiet again. It returns the time the clock was moved by.
func (h *Harness) Settle(ctx context.Context, limit time.Duration) (time.Duration, error) {
	start := h.Now()
	if err := h.quiesce(ctx); err != nil {
		return 0, err
	}
	for range maxTimerRounds {
		due, ok := h.clock.nextDelayed()
		if !ok || due.After(start.Add(limit)) {
			return h.Now().Sub(start), nil
		}
		if err := h.moveTo(ctx, due); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("settle: still busy after %d rounds of delayed keys; a key that is requeued for ever? use a smaller limit", maxTimerRounds)
}

// maxTimerRounds bounds Settle's rounds, against a reconcile that requeues without end.
const maxTimerRounds = 10000

// Advance moves the virtual clock forward by d, running every delayed key, every schedule
// entry and every AfterFunc (fetch's timeouts, late answers) at its due time along the way, in
// order, and settles (without moving the clock further).
func (h *Harness) Advance(ctx context.Context, d time.Duration) error {
	target := h.Now().Add(d)
	if err := h.quiesce(ctx); err != nil {
		return err
	}
	for range maxTimerRounds {
		due, ok := h.clock.nextDelayed()
		if sched, has := h.clock.nextTimer(); has && (!ok || sched.Before(due)) {
			due, ok = sched, true
		}
		if !ok || due.After(target) {
			return h.moveTo(ctx, target)
		}
		if err := h.moveTo(ctx, due); err != nil {
			return err
		}
	}
	return fmt.Errorf("advance: more than %d rounds of delayed keys within %s", maxTimerRounds, d)
}

// moveTo sets the clock to t (never backwards), fires what is due then and runs until quiet.
func (h *Harness) moveTo(ctx context.Context, t time.Time) error {
	if t.After(h.Now()) {
		h.cfg.Clock.SetTime(t)
	}
	h.clock.fire()
	return h.quiesce(ctx)
}

// quiesce waits until the engine is idle and the cluster unchanged over a whole round: the
// informers have delivered everything (a barrier), the versions have handled it, the
// reconcilers and schedules have nothing queued or running, and nobody wrote meanwhile. A
// plugin whose writes keep causing writes (each update answered by another) never gets
// there: that is an error after QuietTimeout.
func (h *Harness) quiesce(ctx context.Context) error {
	deadline := time.Now().Add(h.cfg.QuietTimeout)
	first := h.cfg.Cluster.Writes()
	writeLoop := func() error {
		return fmt.Errorf("settle: the plugin is still writing after %s (%d writes): does each of its writes cause another?",
			h.cfg.QuietTimeout, h.cfg.Cluster.Writes()-first)
	}
	for {
		writes := h.cfg.Cluster.Writes()
		err := h.source.flush(ctx, h.waiter)
		if err == nil {
			err = h.waiter.until(ctx, "the scripts to handle their events", func() bool { return h.e.Idle() || h.stalled() })
		}
		if err == nil {
			err = h.waiter.until(ctx, "reconcile and schedules to finish", func() bool { return h.clock.quiet() || h.stalled() })
		}
		switch {
		case err != nil && ctx.Err() == nil && h.cfg.Cluster.Writes() > writes:
			return writeLoop() // busy because it kept writing meanwhile: say so
		case err != nil:
			return err
		case h.cfg.Cluster.Writes() == writes:
			return nil
		case time.Now().After(deadline):
			return writeLoop()
		}
	}
}

// AfterFunc calls f when Advance moves the virtual clock d past now (Advance stops there, as at
// a schedule), on the goroutine that called Advance: for a fetch client that answers late.
func (h *Harness) AfterFunc(d time.Duration, f func()) clock.Timer { return h.clock.AfterFunc(d, f) }

// Close removes the cluster's admission hook, stops the plugin (interrupting the calls still
// running) and every informer, and waits for their goroutines.
func (h *Harness) Close() {
	h.cfg.Cluster.SetAdmission(nil)
	h.e.Close()
	h.store.Close()
}

// StoreNamespace is the namespace of the harness's in-memory store.
const StoreNamespace = "jsinformer-store"

// newStore is ctx.store in the harness: the runner's store on ConfigMaps kept in memory, so
// the same versions, conflicts and limits, with TTLs on the virtual clock and writes
// coalesced over a microsecond rather than the runner's window.
func newStore(cfg Config) (*store.Store, error) {
	return store.New(store.Memory(), store.Options{Namespace: StoreNamespace, Window: time.Microsecond, Now: cfg.Clock.Now},
		cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)))
}

// Store is ctx.store's backend, for a test to seed or inspect (Scope(script)).
func (h *Harness) Store() *store.Store { return h.store }

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

// AuditReports is script's audit results as the runner publishes them (engine.AuditReports):
// what `runner test`'s h.audit() reads once the harness is quiet; false when the script does
// not audit.
func (h *Harness) AuditReports(script string) ([]*unstructured.Unstructured, bool) {
	return h.e.AuditReports(script)
}
