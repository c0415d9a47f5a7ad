package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/internal/netguard"
	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/store"
)

// DefaultDebounce is the quiet period after a script file changes before it is reloaded:
// long enough for the back-to-back steps of one save, short enough not to be felt (a writer
// that pauses longer mid-save is handled by the plugins package's grace period).
const DefaultDebounce = plugins.DefaultDebounce

// DefaultMaxBacklog is Config.MaxBacklog when zero: about a minute of a busy resource's
// changes for a handler that keeps up on average, and a few MB of events.
const DefaultMaxBacklog = 10000

// DefaultMetricSeriesLimit is the default of Config.MetricSeriesLimit: a script's family with
// more series than this is a mistake (a label per object where a count was meant) that would
// weigh on the runner and on Prometheus.
const DefaultMetricSeriesLimit = 10_000

// DefaultMetricCollectTimeout is the default of Config.MetricCollectTimeout: well under
// Prometheus's default scrape timeout (10s), so that a busy or paused script never takes the
// runner's whole /metrics down with it.
const DefaultMetricCollectTimeout = enginemetrics.DefaultCollectDeadline

// Config is everything the engine needs; cmd/runner fills it from flags.
type Config struct {
	// RESTConfig reaches the cluster; required by New, unused by NewDriven.
	RESTConfig *rest.Config
	// Resources are the --gvr names watched by scripts whose definition has no `watch`.
	Resources []string
	// Namespace, LabelSelector and FieldSelector apply where a script's watch leaves them empty.
	Namespace     string
	LabelSelector string
	FieldSelector string
	// ScriptsDir is the folder of plugin scripts; it must exist.
	ScriptsDir string
	// Resync is the informers' resync period; zero disables resyncs.
	Resync time.Duration
	// HandlerTimeout bounds each handler call; default 5s.
	HandlerTimeout time.Duration
	// Debounce is the quiet period after a file change before it is read; default DefaultDebounce.
	Debounce time.Duration
	// RetryUnknownResources is how often a script whose watch names a resource the server does
	// not serve (yet) is tried again, so a CRD installed later is picked up; default 10s.
	RetryUnknownResources time.Duration
	// DryRun sends every write from scripts with dryRun=All.
	DryRun bool
	// FieldManager is used by scripts' writes; default "jsinformer".
	FieldManager string
	// Logger receives everything; default discards.
	Logger *slog.Logger
	// Registerer receives the engine's metrics when set.
	Registerer prometheus.Registerer
	// PermissionCheckInterval is how often the runner asks the API server whether it holds
	// what its loaded scripts need (also at start and on each reload), and how long an answer
	// is cached; default permissions.DefaultInterval (30s), negative turns the check off.
	PermissionCheckInterval time.Duration
	// Admission is what serving the scripts' validate and mutate takes of the API server
	// (the webhook configurations and certificate Secret the runner uses, by name), for the
	// permission check; the zero value asks for nothing.
	Admission permissions.Admission
	// ObserveCalls, when set, is told every k8s call of every script after it returned: the
	// permission it used and its error (`runner test --permissions`). It runs on the script's
	// goroutine.
	ObserveCalls func(permissions.Need, error)
	// UnhealthyAfter is how long an informer a loaded script needs may fail to list/watch, or a
	// version may take to sync, before Ready reports the runner not ready; default 30s.
	UnhealthyAfter time.Duration
	// ConnectionHealth is how the clients notice a silent API server connection (HTTP/2
	// PINGs, dynamicinformer.WithConnectionHealth); zero fields take
	// dynamicinformer.DefaultReadIdleTimeout and DefaultPingTimeout, a negative ReadIdleTimeout
	// leaves the transport as client-go builds it (its environment variables decide).
	ConnectionHealth dynamicinformer.ConnectionHealth
	// Backoff paces the informers' retries of failing lists and watches; zero fields take
	// dynamicinformer.DefaultBackoff's.
	Backoff dynamicinformer.Backoff
	// StreamingLists makes informers take their initial state from streaming lists instead of
	// paged LISTs (dynamicinformer.Options.StreamingLists).
	StreamingLists bool
	// PaceGC lets the engine start garbage collections itself, between reloads, so that a
	// cycle over a large cache does not start in the middle of one (package engine/internal/gcpace). Collections
	// are process-wide: an embedder sharing the process with other work may leave it off. The
	// runner turns it on.
	PaceGC bool
	// Fetch returns the client a version of script sends its fetch requests through: in the
	// runner a (*netguard.Client).Limited, so each version has its own concurrency limit over
	// the one pooled transport and allow list; the offline harness's routes in tests. Nil
	// refuses every request, naming --allow-net.
	Fetch func(script string) scripting.HTTPClient
	// Store, when set, backs ctx.store (package store): each script gets the store of its
	// name, in ConfigMaps of Store.Namespace, written through the engine's fenced client.
	// Nil: ctx.store throws.
	Store *store.Options
	// OutboxLease is how long a replica's claim on an outbox message holds before another
	// takes the delivery as interrupted (docs/once.md); default: HandlerTimeout plus the
	// call's grace plus twice two store request timeouts.
	OutboxLease time.Duration
	// LeaderElection, when set, makes the runner a hot standby until it holds the Lease it
	// names (see LeaderElection).
	LeaderElection *LeaderElection
	// Sharding, when set, spreads the work over the replicas sharing its Name (shard.go,
	// package sharding): each holds a Lease of its own, named from Name and its Identity, and
	// calls handlers and reconciles only for the keys it owns. Its durations mean what they
	// mean for LeaderElection, with which it cannot be combined.
	Sharding *LeaderElection
	// ShardCache, with Sharding, partitions the caches of scripts by namespace
	// (--shard-cache, shardcache.go): each replica lists, watches and caches only the
	// namespaces it owns, and keys are placed by namespace. A script may say shard: "none".
	ShardCache bool
	// MemoryLimit, when positive, turns the memory guard on (package engine/internal/memguard):
	// near this many bytes of Go heap, the script whose memory keeps growing is stopped until
	// its file changes.
	// The runner sets it from --memory-limit, GOMEMLIMIT or the container's limit.
	MemoryLimit int64
	// MetricSeriesLimit is the most series one metric family of a script may have
	// (--metric-series-limit); default DefaultMetricSeriesLimit.
	MetricSeriesLimit int
	// MetricCollectTimeout is how long a scrape waits for the scripts' collects
	// (--metric-collect-timeout); a family not answered by then is left out of that scrape and
	// counted, the rest served. Default DefaultMetricCollectTimeout.
	MetricCollectTimeout time.Duration
	// MemoryCheckInterval is how often the guard looks at the heap; default 1s.
	MemoryCheckInterval time.Duration
	// MaxBacklog is how many events a script version may have queued before updates of one
	// object are coalesced (package engine/internal/coalesce); zero means DefaultMaxBacklog, negative no limit.
	MaxBacklog int
	// onCached, when set, sees every object entering an informer's cache, for tests.
	onCached func(*unstructured.Unstructured)
	// heap, when set, replaces the live heap the memory guard reads, for tests.
	heap func() int64
	// remind, when set, replaces the informers' reminder interval (dynamicinformer.Options.Remind), for tests.
	remind time.Duration
	// shardNamespaces, set by tests, replaces the namespaces listed for the ring's plan.
	shardNamespaces func(context.Context) ([]string, error)
	// TraceRecords caps the trace records kept for Explain and Subscribe (the recorder,
	// engine/internal/trace): zero means inspection.DefaultTraceRecords, negative turns recording off.
	// Each object keeps at most inspection.TracePerObject; the oldest record goes first.
	TraceRecords int
	// OnAdmission, when set, is called on the loader goroutine whenever the scripts serving
	// admission change (AdmissionEntries): a script's version with validate or mutate became
	// current, or one was unloaded or stopped. It must not block: signal a goroutine of yours.
	OnAdmission func()
	// OnReady, when set, is called once: the initial scripts are loaded (or failed) and every
	// informer they use has synced and been handled.
	OnReady func()
}

func (c *Config) setDefaults() error {
	if c.ScriptsDir == "" {
		return errors.New("configure engine: ScriptsDir is required")
	}
	if c.HandlerTimeout <= 0 {
		c.HandlerTimeout = 5 * time.Second
	}
	if c.Fetch == nil {
		none := netguard.NewClient(netguard.Config{})
		c.Fetch = func(string) scripting.HTTPClient { return none.Limited() }
	}
	if c.RetryUnknownResources <= 0 {
		c.RetryUnknownResources = 10 * time.Second
	}
	if c.UnhealthyAfter <= 0 {
		c.UnhealthyAfter = 30 * time.Second
	}
	if c.ConnectionHealth.ReadIdleTimeout == 0 {
		c.ConnectionHealth.ReadIdleTimeout = dynamicinformer.DefaultReadIdleTimeout
	}
	if c.ConnectionHealth.PingTimeout <= 0 {
		c.ConnectionHealth.PingTimeout = dynamicinformer.DefaultPingTimeout
	}
	if c.MetricSeriesLimit <= 0 {
		c.MetricSeriesLimit = DefaultMetricSeriesLimit
	}
	if c.MetricCollectTimeout <= 0 {
		c.MetricCollectTimeout = DefaultMetricCollectTimeout
	}
	if c.MemoryCheckInterval <= 0 {
		c.MemoryCheckInterval = time.Second
	}
	if c.MaxBacklog == 0 {
		c.MaxBacklog = DefaultMaxBacklog
	}
	if c.FieldManager == "" {
		c.FieldManager = "jsinformer"
	}
	if c.LeaderElection != nil {
		le := *c.LeaderElection // the caller's copy is not ours to default
		if err := le.setDefaults(); err != nil {
			return err
		}
		c.LeaderElection = &le
	}
	if c.ShardCache && c.Sharding == nil {
		return errors.New("configure engine: ShardCache partitions caches among sharded replicas and needs Sharding")
	}
	if c.Sharding != nil {
		if c.LeaderElection != nil {
			return errors.New("configure engine: leader election and sharding cannot be used together: every sharded replica works")
		}
		sh := *c.Sharding
		if err := sh.setDefaults(); err != nil {
			return fmt.Errorf("configure sharding: %w", err)
		}
		c.Sharding = &sh
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
