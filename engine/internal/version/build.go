package version

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/coalesce"
	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/leader"
	"github.com/jsinformer/jsinformer/engine/internal/reconcile"
	"github.com/jsinformer/jsinformer/engine/internal/schedule"
	"github.com/jsinformer/jsinformer/engine/internal/shardgate"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// Config is what New needs: the compiled script, the runtime its definition was read from,
// its resolved watches, and the parts of the engine a version uses, as values, functions and
// interfaces this package owns (it never imports the engine).
type Config struct {
	Name, Hash string
	Program    *scripting.Program
	// Options are the runtimes' options; every runtime beyond Script is made with Tap(Options).
	Options scripting.Options
	// Script is the worker's runtime, made by the caller to read the definition (Def), and
	// Recorder its recording side. The Version owns Script from New on, whether New succeeds.
	Script   *scripting.Script
	Recorder *trace.Worker
	Def      scripting.Definition
	Targets  []Target // the resolved watches, at least one; the first is the reconciled resource
	// Unwatched: the script needs no informer of its targets (scripting.NeedsInformers), which
	// only say what its webhooks cover; Subscribe acquires none.
	Unwatched bool
	Started   time.Time // when building began, for the load duration
	Standby   bool      // built while not leading: it calls nothing, ever
	Lead      *leader.Elector
	Shard     *shardgate.Gate
	Book      *status.Book // the state API's record, told of every state change; nil in unit tests
	Pauses    *inspect.Pauses
	Logger    *slog.Logger // tagged with the script and content
	// MaxBacklog bounds each queue, past which updates of one object coalesce; 0: unbounded.
	MaxBacklog int
	// Handler resolves one handler's series and state counters (by its JS name); Coalesced
	// the counter of coalesced events, asked only with a MaxBacklog.
	Handler       func(handler string) *enginemetrics.Handler
	Coalesced     func() prometheus.Counter
	ScriptMetrics *enginemetrics.Scripts
	Clock         Clock
	// Tap returns the options of one more runtime, feeding the trace, and its recording side.
	Tap func(scripting.Options) (scripting.Options, *trace.Worker)
	// Acquire hands out a reference on the shared informer of a key; Fanouts is the registry
	// of client-go registrations the version subscribes through; Resolve canonicalises a
	// resource name for ctx.cache.
	Acquire func(dynamicinformer.Key) (Informer, error)
	Fanouts *fanout.Registry[Event]
	Resolve func(string) (string, error)
	// Outbox, when set, is the script's outbox, which the version delivers from once it serves
	// if its definition declares one (outbox.go).
	Outbox *OutboxConfig
	// OnClose runs when the version is closed (the end of the collector's lift for this
	// load); idempotent, may be nil.
	OnClose func()
}

// Clock is the engine's time: schedules' timers and reconcile delays follow it.
type Clock interface {
	schedule.Clock
	// NewQueue is a reconcile workqueue whose delays run on this clock.
	NewQueue(name string) workqueue.TypedRateLimitingInterface[string]
}

// reconcileWorkers are a version's reconcile workers (package engine/internal/reconcile).
type reconcileWorkers = reconcile.Workers[*scripting.Script]

// New builds a version on cfg: its store, queues, index stage and reconcile workers, each
// with runtimes of its own. Nothing runs yet: the loader calls Start, then Subscribe. On
// error everything made, cfg.Script included, is closed.
func New(cfg Config) (*Version, error) {
	v := &Version{
		name: cfg.Name, hash: cfg.Hash, standby: cfg.Standby, lead: cfg.Lead, shard: cfg.Shard, book: cfg.Book,
		started: cfg.Started, onClose: cfg.OnClose, clock: cfg.Clock, script: cfg.Script, def: cfg.Def, logger: cfg.Logger,
		store: scriptcache.New(cfg.Def.Indexers), targets: cfg.Targets, unwatched: cfg.Unwatched, acquire: cfg.Acquire, resolve: cfg.Resolve, fans: cfg.Fanouts,
		queue: NewQueue(), abort: make(chan struct{}), synced: make(chan struct{}), done: make(chan struct{}),
		ownerNamespaced: cfg.Targets[0].Resource.Namespaced, partition: cfg.Targets[0].Key.Partition, insp: NewInspect(cfg.Recorder, cfg.Pauses),
		outboxCfg: cfg.Outbox,
	}
	v.retired, v.endRetired = context.WithCancel(context.Background())
	// From here v owns every runtime made for it: Close releases them on any failure.
	if err := v.addRuntimes(cfg); err != nil {
		v.Close() // nothing runs yet: closing is immediate
		return nil, err
	}
	return v, nil
}

// addRuntimes gives v its index stage and reconciler, when the script has them, and resolves
// its handler metrics.
func (v *Version) addRuntimes(cfg Config) error {
	v.scriptMetrics = cfg.ScriptMetrics.NewVersion(v.name, v.def.Metrics, v, v.logger) // before defines(EventCollect) reads it
	for kind, name := range handlerNames {
		if v.defines(Kind(kind)) {
			v.metrics[kind] = cfg.Handler(name)
		}
	}
	v.intake = v.queue
	if len(v.def.Indexers) > 0 {
		var err error
		if v.indexer, err = NewIndexStage(cfg.Program, cfg.Options, v.def.Indexers, v.logger); err != nil {
			return err
		}
		v.intake = NewQueue()
	}
	if cfg.MaxBacklog > 0 {
		coalesced := cfg.Coalesced()
		v.queue.SetOverflow(coalesce.New(cfg.MaxBacklog, Overload, v.logger, coalesced))
		if v.intake != v.queue {
			v.intake.SetOverflow(coalesce.New(cfg.MaxBacklog, Overload, v.logger, coalesced))
		}
	}
	if v.def.Validate || v.def.Mutate { // standbys too: every replica serves admission
		var err error
		if v.admit, err = newAdmitPool(cfg); err != nil {
			return err
		}
	}
	if v.def.Reconcile && !v.standby {
		var err error
		if v.reconciler, err = v.newReconciler(cfg); err != nil {
			return err
		}
		v.enqueue = v.ctxEnqueue
	}
	return nil
}

// newReconciler builds v's reconcile workers, one runtime each, on the first watched
// resource's cache and the engine's clock.
func (v *Version) newReconciler(cfg Config) (*reconcileWorkers, error) {
	scripts := make([]*scripting.Script, max(1, v.def.Concurrency))
	workers := make([]*trace.Worker, len(scripts))
	for i := range scripts {
		tappedOpts, w := cfg.Tap(cfg.Options)
		workers[i] = w
		s, err := cfg.Program.Instantiate(tappedOpts)
		if err != nil {
			for _, made := range scripts[:i] {
				made.Close()
			}
			return nil, fmt.Errorf("instantiate reconcile worker: %w", err)
		}
		scripts[i] = s
	}
	t := cfg.Targets[0]
	return reconcile.New(reconcile.Config[*scripting.Script]{
		Name: v.name, Version: v.hash, Queue: cfg.Clock.NewQueue(v.name), Runtimes: scripts, Recorders: workers,
		MaxRetries: v.def.MaxRetries, Logger: v.logger, Metrics: cfg.Handler("reconcile"), Sink: v.metricSink(),
		Cache: &scriptcache.View{Store: v.store, Resource: t.Resource.String(), Resolve: cfg.Resolve, Partition: cachePartition(t.Key.Partition)},
		Begin: v.begin, Handles: v.handles, Hold: func() bool { return cfg.Pauses.Wait(v.name, v.abort) },
	}), nil
}
