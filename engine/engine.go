package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/audit"
	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/gcpace"
	"github.com/jsinformer/jsinformer/engine/internal/health"
	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/leader"
	"github.com/jsinformer/jsinformer/engine/internal/settle"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
	"github.com/jsinformer/jsinformer/store"
)

// Engine runs the scripts of one folder against one cluster. Create it with New and call Run
// once.
type Engine struct {
	cfg       Config
	logger    *slog.Logger
	discovery discovery.DiscoveryInterface // Run's connection check; nil in a driven engine
	// server is the API server's version, read once by Run's connection check (nil before, and
	// in a driven engine); Status reads it from any goroutine.
	server    atomic.Pointer[status.ServerStatus]
	resolver  Resolver
	factory   Informers
	fanouts   fanout.Registry[version.Event] // one client-go registration per informer, shared by the versions (internal/version: Subscription)
	clock     Clock
	newClient func(logger *slog.Logger) scripting.Client // a version's `k8s` global
	onParked  func(delta int)                            // Env.OnParked
	stats     *stats
	// scriptMetrics serves the scripts' metric families (metrics.go); the loader swaps its
	// entries, scrapes read them.
	scriptMetrics *enginemetrics.Scripts
	book          *status.Book // the state API (status.go)
	memory        sync.Map     // script name → int64: its runtimes' last measured bytes (memory guard)
	defaults      []dynamicinformer.Resource
	// closeConns closes the idle connections of the transport New built, if it built one.
	closeConns func()
	// store backs ctx.store (Config.Store); nil without one.
	store *store.Store
	// storeOwners keeps the stores of the scripts in the folder from the retention (storesweep.go).
	storeOwners storeOwners
	// outboxMetrics are the series of the scripts' outboxes (once.go).
	outboxMetrics *enginemetrics.Outbox

	// Owned by the loader goroutine (Run's).
	plugins       map[string]*plugin
	initial       map[string]bool           // initial scripts not yet synced or failed
	waiting       map[string]waitingScript  // failed on a resource not served yet; retried
	awaitRing     map[string]plugins.Source // partitioned, loaded once the replica joined its ring (shardcache.go)
	failures      settle.Failures           // held until their content settles, and reported
	watcherSynced bool
	ready         bool
	synced        chan *loaded
	memoryStops   chan memoryStop   // the memory guard's verdicts
	stopped       map[string]string // script name → the content the memory guard stopped

	readyOnce atomic.Bool // ready, for readers on other goroutines
	needs     *needs      // written by the loader, read by probes, metrics and health reports
	health    *health.Health

	retiring sync.WaitGroup // versions draining after retirement, and the collections after them
	gc       *gcpace.Pacer
	lead     *leadership // nil without leader election
	shard    shardOwner  // nil without sharding (shard.go)

	// admission is the table of the versions serving validate and mutate (admission.go):
	// written by the loader, read by any goroutine.
	admission atomic.Pointer[admissionTable]

	audits atomic.Pointer[auditSet] // nil until Run (or NewDriven) starts it (audit.go)
	// stopDrivenAudits stops the audits NewDriven started; Close calls it.
	stopDrivenAudits func()
	// reportsMissing: the cluster does not serve the openreports.io CRDs (reports.go)
	reportsMissing atomic.Bool
	// writeConfig is the RESTConfig of the engine's write clients: fenced by the Lease (and the
	// shard) and honouring forced dry-run; the report writer's client is built from it.
	writeConfig  *rest.Config
	reportWriter atomic.Pointer[audit.Writer] // nil until Run starts it with a cluster (reports.go)
	perms        *permissions.Checker         // nil in a driven engine or with the check off (permissions.go)
	trace        *trace.Recorder              // nil with recording off (Config.TraceRecords < 0)
	pauses       *inspect.Pauses              // scripts paused through the debug API
}

// plugin is the state of one script file: the version serving and the one syncing to replace it.
type plugin struct {
	current, pending *loaded
	// stopped is a version the memory guard stopped while pending synced: pending's reconcile
	// waits for it, as for a version it replaces.
	stopped *loaded
}

// latest is the newest version: the one syncing, else the one serving.
func (p *plugin) latest() *loaded {
	if p.pending != nil {
		return p.pending
	}
	return p.current
}

// New validates cfg and builds the clients; it does not contact the cluster.
func New(cfg Config) (*Engine, error) {
	if cfg.RESTConfig == nil {
		return nil, errors.New("configure engine: RESTConfig is required")
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg}
	if cfg.ConnectionHealth.ReadIdleTimeout > 0 {
		checked, closeConns, err := dynamicinformer.WithConnectionHealth(cfg.RESTConfig, cfg.ConnectionHealth)
		if err != nil {
			return nil, err
		}
		e.cfg.RESTConfig, cfg.RESTConfig, e.closeConns = checked, checked, closeConns
	}
	restCfg := cfg.RESTConfig
	if cfg.LeaderElection != nil {
		var err error
		if e.lead, err = e.newLeadership(*cfg.LeaderElection); err != nil {
			return nil, err
		}
		restCfg = rest.CopyConfig(restCfg)
		restCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return leader.Fence(rt, e.lead.Valid) })
	}
	if cfg.Sharding != nil {
		var err error
		if e.shard, err = e.newShard(*cfg.Sharding); err != nil {
			return nil, err
		}
		restCfg = rest.CopyConfig(restCfg)
		restCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return leader.Fence(rt, e.shard.Valid) })
	}
	if err := e.initStore(restCfg); err != nil {
		return nil, err
	}
	restCfg = rest.CopyConfig(restCfg)
	restCfg.Wrap(k8sclient.ForcedDryRunTransport)
	e.writeConfig = restCfg
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("create dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("create discovery client: %w", err)
	}
	e.discovery = disc
	// Informers decode lists and watch events with the fast decoder (internal/unstructuredjson).
	informerClient, err := dynamicinformer.NewClient(restCfg)
	if err != nil {
		return nil, err
	}
	factory := dynamicinformer.NewFactory(informerClient, dynamicinformer.Options{
		Resync: cfg.Resync, Logger: cfg.Logger, Backoff: cfg.Backoff, OnHealth: e.onHealth,
		StreamingLists: cfg.StreamingLists, OnCached: cfg.onCached, Remind: cfg.remind,
	})
	resolver := dynamicinformer.NewResolver(disc, cfg.Logger)
	client := k8sclient.New(dyn, resolver, k8sclient.Options{DryRun: cfg.DryRun, FieldManager: cfg.FieldManager, Logger: cfg.Logger})
	e.init(Env{Informers: FactoryInformers(factory), Resolver: resolver, Clock: realClock{},
		Client: func(logger *slog.Logger) scripting.Client { return client.WithLogger(logger) }})
	if err := e.newPermissions(); err != nil {
		return nil, err
	}
	return e, nil
}

// init sets up everything on env: the part of New that NewDriven and the loader's unit tests
// share.
func (e *Engine) init(env Env) {
	e.logger, e.factory, e.resolver, e.clock, e.newClient = e.cfg.Logger, env.Informers, env.Resolver, env.Clock, env.Client
	e.onParked = env.OnParked
	if env.Store != nil {
		e.store = env.Store
	}
	e.stats, e.book = newStats(e.cfg.Registerer), status.NewBook()
	e.plugins, e.initial, e.waiting = map[string]*plugin{}, map[string]bool{}, map[string]waitingScript{}
	e.awaitRing = map[string]plugins.Source{}
	e.synced, e.gc, e.needs = make(chan *loaded), gcpace.New(e.cfg.Logger, e.cfg.PaceGC), newNeeds()
	e.memoryStops, e.stopped = make(chan memoryStop), map[string]string{}
	e.trace, e.pauses = trace.New(e.cfg.TraceRecords), inspect.NewPauses()
	e.health = e.newHealth()
	if e.lead == nil {
		e.stats.Leading(true) // without leader election, every runner leads
	}
	e.scriptMetrics = enginemetrics.NewScripts(e.cfg.MetricSeriesLimit, e.cfg.MetricCollectTimeout)
	e.outboxMetrics = enginemetrics.NewOutbox(e.cfg.Registerer)
	if e.cfg.Registerer != nil {
		e.cfg.Registerer.MustRegister(enginemetrics.NewInformers(e.factory.Health, e.Ready), e.scriptMetrics, e.scriptMetrics.Errors())
		if e.shard != nil {
			e.cfg.Registerer.MustRegister(enginemetrics.NewShard(enginemetrics.Ring{Members: e.shard.Members, Pending: e.shard.Pending, Owned: e.shardOwned, Cached: e.shardCached}))
		}
	}
}

// Run connects, loads the scripts, and serves until ctx is done; then it stops every script
// and informer before returning. It fails fast when the cluster is unreachable, the
// credentials are rejected, a --gvr is unknown, or the scripts folder does not exist.
func (e *Engine) Run(ctx context.Context) error {
	if e.closeConns != nil {
		defer e.closeConns() // the transport is this engine's: its connections end with it
	}
	if err := e.connect(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while connecting: not a failure
		}
		return err
	}
	if err := e.resolveDefaults(); err != nil {
		return err
	}
	defer e.startPermissionCheck(ctx)()
	watcher, err := plugins.NewWatcher(e.cfg.ScriptsDir, plugins.Options{
		Logger: e.logger, Debounce: e.cfg.Debounce, Imports: scripting.Imports,
	})
	if err != nil {
		return fmt.Errorf("watch scripts: %w", err)
	}
	if e.lead != nil {
		// Cancelled after the scripts have stopped (defers run last-in first-out), so the
		// Lease is released only once no call of this runner's can still write.
		electCtx, stopElection := context.WithCancel(context.Background())
		waitElection := e.runElection(electCtx)
		defer waitElection()
		defer stopElection()
	}
	if e.shard != nil {
		defer e.shard.Start()() // stopped after the scripts have stopped: then the Lease is released
	}
	defer e.closeStore() // after the scripts stopped: their last writes are then acknowledged
	defer e.startStoreSweeper(ctx)()
	defer e.shutdown()
	defer e.startAudits(ctx)()      // stopped before the versions whose informers it reads
	defer e.startMemoryGuard(ctx)() // stopped before the scripts are
	return e.loop(ctx, watcher)
}

// connect checks that the cluster answers and accepts our credentials, so that a bad
// kubeconfig is one clear error rather than endless informer retries.
func (e *Engine) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	host := e.cfg.RESTConfig.Host
	server, err := readServer(ctx, discovery.ToServerVersionInterfaceWithContext(e.discovery), host, e.logger)
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("connect to cluster %s: the server rejected the credentials (401 Unauthorized); check the kubeconfig user: %w", host, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("connect to cluster %s: the user may not read /version (403 Forbidden): %w", host, err)
	case err != nil:
		return fmt.Errorf("connect to cluster %s: %w", host, err)
	}
	e.server.Store(server)
	return nil
}

func (e *Engine) resolveDefaults() error {
	for _, name := range e.cfg.Resources {
		res, err := e.resolver.Resolve(name)
		if err != nil {
			return err
		}
		e.defaults = append(e.defaults, res)
	}
	return nil
}

// loop is the loader: it applies plugin events and version syncs one at a time.
func (e *Engine) loop(ctx context.Context, watcher *plugins.Watcher) error {
	events := make(chan plugins.Event)
	watchErr := make(chan error, 1)
	watchCtx, stopWatching := context.WithCancel(ctx)
	go func() {
		watchErr <- watcher.Run(watchCtx, func(ev plugins.Event) {
			select {
			case events <- ev:
			case <-watchCtx.Done():
			}
		})
	}()
	defer func() { // the folder watcher is joined before the loader returns, whatever ends it
		stopWatching()
		if watchErr != nil {
			if err := <-watchErr; err != nil {
				e.logger.Debug("scripts folder watcher stopped", "error", err.Error())
			}
		}
	}()
	retry := time.NewTicker(e.cfg.RetryUnknownResources)
	defer retry.Stop()
	var leading <-chan bool
	var fence <-chan time.Time
	if e.lead != nil {
		leading = e.lead.Changes()
		ticker := time.NewTicker(e.lead.Config().RetryPeriod / 2)
		defer ticker.Stop()
		fence = ticker.C
	}
	var gains, targets <-chan struct{}
	if e.shard != nil {
		gains, targets = e.shard.Gains(), e.shard.Targets()
	}
	for {
		select {
		case <-ctx.Done():
			e.leaveRing()
			return nil
		case l := <-leading:
			if err := e.onLeading(l); err != nil {
				return err
			}
		case <-fence:
			if err := e.checkFence(); err != nil {
				return err
			}
		case <-gains:
			e.onShardGains()
		case <-targets:
			e.onShardTarget()
		case <-retry.C:
			e.retryWaiting()
		case err := <-watchErr:
			watchErr = nil // joined
			if err != nil {
				return fmt.Errorf("watch scripts: %w", err)
			}
			return nil
		case ev := <-events:
			e.onPluginEvent(ev)
		case v := <-e.synced:
			e.onSynced(v)
		case s := <-e.memoryStops:
			e.onMemoryStop(s)
		}
	}
}

// shutdown stops every version without draining and every informer, and waits for them.
func (e *Engine) shutdown() {
	for _, p := range e.plugins {
		for _, v := range []*loaded{p.pending, p.current} {
			if v != nil {
				e.retire(v, false)
			}
		}
	}
	e.retiring.Wait()
	e.factory.Shutdown()
}

// ActiveInformers lists the running informers and how many script versions use each; for
// diagnostics and tests. Safe for concurrent use.
func (e *Engine) ActiveInformers() map[string]int {
	out := map[string]int{}
	for k, refs := range e.factory.Active() {
		out[k.String()] = refs
	}
	return out
}
