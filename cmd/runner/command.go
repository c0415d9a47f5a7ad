package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/permissions"
)

const example = `  # Log every Deployment change with the example scripts
  runner --gvr apps/v1/deployments --scripts ./examples/scripts

  # Two resources, one namespace, only objects labelled team=web
  runner --gvr deploy --gvr cm -n web -l team=web --scripts ./scripts

  # Try automation without changing anything: every write is sent with dryRun=All
  runner --gvr deploy --scripts ./scripts --dry-run

  # Two or more replicas: only the holder of the Lease "jsinformer" calls scripts
  runner --gvr deploy --scripts ./scripts --leader-elect --leader-elect-resource-namespace ops

  # Three or more replicas sharing the work: each owns about a third of the objects' keys
  runner --gvr deploy --scripts ./scripts --sharded --leader-elect-resource-namespace ops

  # JSON logs and Prometheus metrics on :9090/metrics (/healthz, /readyz too)
  runner --gvr deploy --scripts ./scripts --log-format json --metrics-addr :9090`

// options are the runner's own flags; the kubeconfig flags live in genericclioptions.
type options struct {
	kube              *genericclioptions.ConfigFlags
	resources         []string
	scripts           string
	allNamespaces     bool
	labelSelector     string
	fieldSelector     string
	resync            time.Duration
	handlerTimeout    time.Duration
	debounce          time.Duration
	logFormat         string
	verbosity         int
	dryRun            bool
	qps               float32
	burst             int
	metricsAddr       string
	unhealthyAfter    time.Duration
	permissionCheck   time.Duration
	metricSeriesLimit int
	metricCollect     time.Duration
	memoryLimit       string
	streamingLists    bool
	readIdle          time.Duration
	pingTimeout       time.Duration
	leader            leaderFlags
	maxBacklog        int
	debugAddr         string
	debugTLSCert      string
	debugTLSKey       string
	pprof             bool
	traceRecords      int
	webhook           webhookFlags
	fetch             fetchFlags
	store             storeFlags
	outboxLease       time.Duration
}

func newCommand() *cobra.Command {
	o := &options{kube: genericclioptions.NewConfigFlags(true)}
	cmd := &cobra.Command{
		Use:   "runner [--gvr RESOURCE]... --scripts DIR [flags]",
		Short: "Run JavaScript plugins as event handlers for any Kubernetes resource",
		Long: `runner watches Kubernetes resources with shared informers and calls the JavaScript (or
TypeScript) plugins in a folder for every add, update and delete. Each .js/.ts file exports one
definition object (see docs/scripts.md). Saving a file reloads it in place; a broken save keeps
the previous version running and logs the error with file:line:col.

Resources are named as kubectl names them: apps/v1/deployments, deployments.apps, deploy, or a
custom resource. A script's own 'watch' overrides --gvr. The cluster is found as kubectl finds
it: --kubeconfig, $KUBECONFIG, ~/.kube/config, or the in-cluster service account.

Unlike kubectl, the default is all namespaces; -n restricts to one.`,
		Example:       example,
		Version:       versionString(),
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.addFlags(cmd)
	cmd.AddCommand(newTypesCommand(), newTestCommand(), newCheckCommand(), newRecordCommand(), newRBACCommand(), newStoreCommand())
	cmd.AddCommand(newListCommand(), newStatusCommand(), newQueueCommand(), newCacheCommand(), newIndexesCommand(), newExplainCommand(),
		newTailCommand(), newRetryCommand(), newPauseCommand(), newResumeCommand(), newLogLevelCommand(), newReplayCommand())
	return cmd
}

func (o *options) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&o.resources, "gvr", nil, "resource to watch, repeatable: apps/v1/deployments, deploy, widgets.example.com (scripts with their own 'watch' ignore it)")
	f.StringVar(&o.scripts, "scripts", "", "folder of plugin scripts (.js, .mjs, .cjs, .ts), watched for changes (required)")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "watch all namespaces (the default unless -n is given)")
	f.StringVarP(&o.labelSelector, "selector", "l", "", "label selector for watches that set none, e.g. app=web,tier!=db")
	f.StringVar(&o.fieldSelector, "field-selector", "", "field selector for watches that set none, e.g. metadata.name=x")
	f.DurationVar(&o.resync, "resync", 0, "informer resync period: every object is re-delivered as an update this often (0 disables)")
	f.DurationVar(&o.handlerTimeout, "handler-timeout", 5*time.Second, "longest a handler call may run before it is interrupted")
	f.DurationVar(&o.debounce, "debounce", engine.DefaultDebounce, "quiet period after a script file changes before it is reloaded")
	f.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	f.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity: 0 info, 1 debug (includes client-go)")
	f.BoolVar(&o.dryRun, "dry-run", false, "send every write from scripts with dryRun=All: the server validates, nothing is stored")
	f.Float32Var(&o.qps, "qps", 50, "client requests per second to the API server")
	f.IntVar(&o.burst, "burst", 100, "client request burst to the API server")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve /metrics, /healthz and /readyz on this address, e.g. :9090 (off when empty)")
	f.IntVar(&o.metricSeriesLimit, "metric-series-limit", engine.DefaultMetricSeriesLimit, "most series one metric family a script declares may have: past it a collect's family is left out of the scrape, and ctx.metrics refuses new series")
	f.DurationVar(&o.permissionCheck, "permission-check-interval", permissions.DefaultInterval, "how often the runner asks the API server whether it holds what its scripts need (also at start and on each reload; docs/permissions.md); 0 turns the check off")
	f.DurationVar(&o.metricCollect, "metric-collect-timeout", engine.DefaultMetricCollectTimeout, "longest a scrape of /metrics waits for the scripts' collects: a family not computed by then (its script busy, paused or slow) is left out of that scrape and counted in jsinformer_script_metric_errors_total, the rest served; keep it well under Prometheus's scrape_timeout")
	f.DurationVar(&o.unhealthyAfter, "unhealthy-after", 30*time.Second, "/readyz answers 503 once an informer a script needs has failed to list/watch this long, or a script has not synced in this time")
	f.StringVar(&o.memoryLimit, "memory-limit", "", "memory guard: near this much Go heap, stop the script whose memory keeps growing (until its file changes), e.g. 512Mi; 0 turns it off (default: GOMEMLIMIT, else 90% of the container's memory limit)")
	f.IntVar(&o.maxBacklog, "max-backlog", engine.DefaultMaxBacklog, "events a script may have queued before updates of the same object are coalesced (its handler then sees the last state it was given as old, the newest as new; adds and deletes are never dropped); -1 never coalesces")
	f.BoolVar(&o.streamingLists, "streaming-lists", false, "take informers' initial state from a streaming list (a watch that sends every object first, client-go's default) instead of one LIST decoded as it arrives (docs/benchmarks.md); an API server with WatchList off refuses them, and informers list instead")
	f.DurationVar(&o.readIdle, "http2-read-idle-timeout", dynamicinformer.DefaultReadIdleTimeout, "send an HTTP/2 PING on an API server connection silent this long (0 leaves client-go's transport and its HTTP2_* environment variables in charge)")
	f.DurationVar(&o.pingTimeout, "http2-ping-timeout", dynamicinformer.DefaultPingTimeout, "close an API server connection whose PING is unanswered this long: a hung API server is noticed within read-idle + ping timeout, and the informers reconnect")
	f.StringVar(&o.debugAddr, "debug-addr", debugapi.DefaultAddr, "serve the debug API (runner status, explain, tail, ...) on this address; on a non-loopback address every request is authenticated and authorized by the API server, over TLS (docs/debugging.md); empty turns it off")
	f.StringVar(&o.debugTLSCert, "debug-tls-cert-file", "", "certificate for a non-loopback --debug-addr (default: a self-signed one made at start)")
	f.StringVar(&o.debugTLSKey, "debug-tls-key-file", "", "private key of --debug-tls-cert-file")
	f.BoolVar(&o.pprof, "pprof", false, "also serve Go's pprof profiles under /debug/pprof/ on --debug-addr")
	f.IntVar(&o.traceRecords, "trace-records", inspection.DefaultTraceRecords, fmt.Sprintf("trace records kept for runner explain and tail, at most %d per object, oldest dropped first; 0 turns recording off", inspection.TracePerObject))
	o.leader.add(f)
	o.webhook.add(f)
	o.fetch.add(f)
	o.store.add(f)
	addOutboxFlags(f, &o.outboxLease)
	o.kube.AddFlags(f)
}

func (o *options) validate(cmd *cobra.Command) error {
	if err := o.fetch.check(); err != nil {
		return err
	}
	if err := o.store.check(o.dryRun); err != nil {
		return err
	}
	if o.scripts == "" {
		return errors.New("--scripts is required: the folder of plugin scripts (try --scripts ./examples/scripts)")
	}
	if o.allNamespaces && cmd.Flags().Changed("namespace") {
		return errors.New("-A/--all-namespaces and -n/--namespace cannot be used together")
	}
	if o.maxBacklog == 0 || o.maxBacklog < -1 {
		return fmt.Errorf("--max-backlog %d: want a positive number of events, or -1 never to coalesce", o.maxBacklog)
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return fmt.Errorf("--log-format must be text or json, not %q", o.logFormat)
	}
	if o.handlerTimeout <= 0 {
		return errors.New("--handler-timeout must be positive")
	}
	if o.unhealthyAfter <= 0 {
		return errors.New("--unhealthy-after must be positive")
	}
	if o.readIdle < 0 || o.pingTimeout <= 0 {
		return errors.New("--http2-read-idle-timeout must be 0 or positive, --http2-ping-timeout positive")
	}
	if o.metricSeriesLimit <= 0 {
		return errors.New("--metric-series-limit must be positive")
	}
	if o.metricCollect <= 0 {
		return errors.New("--metric-collect-timeout must be positive")
	}
	if o.traceRecords < 0 {
		return fmt.Errorf("--trace-records must be 0 (off) or positive, not %d", o.traceRecords)
	}
	if err := o.webhook.validate(); err != nil {
		return err
	}
	if (o.debugTLSCert == "") != (o.debugTLSKey == "") {
		return errors.New("--debug-tls-cert-file and --debug-tls-key-file go together")
	}
	if o.debounce <= 0 {
		return fmt.Errorf("--debounce must be positive, not %s (the default is %s)", o.debounce, engine.DefaultDebounce)
	}
	if _, err := labels.Parse(o.labelSelector); err != nil {
		return fmt.Errorf("-l/--selector %q is not a valid label selector: %w", o.labelSelector, err)
	}
	if _, err := fields.ParseSelector(o.fieldSelector); err != nil {
		return fmt.Errorf("--field-selector %q is not a valid field selector: %w", o.fieldSelector, err)
	}
	return checkScriptsDir(o.scripts)
}

// checkScriptsDir fails before anything connects when the scripts folder is missing.
func checkScriptsDir(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--scripts %s: the folder does not exist", dir)
	case err != nil:
		return fmt.Errorf("--scripts %s: %w", dir, err)
	case !info.IsDir():
		return fmt.Errorf("--scripts %s: not a folder", dir)
	}
	return nil
}

func (o *options) run(cmd *cobra.Command) error {
	if err := o.validate(cmd); err != nil {
		return err
	}
	memLimit, err := resolveMemoryLimit(o.memoryLimit, cmd.Flags().Changed("memory-limit"), "/sys/fs/cgroup")
	if err != nil {
		return err
	}
	level := levelFor(o.verbosity)
	logger := newLoggerWithLevel(cmd.ErrOrStderr(), o.logFormat, level)
	klog.SetSlogLogger(logger.With("component", "client-go"))
	restConfig, err := o.restConfig()
	if err != nil {
		return err
	}
	restConfig.QPS, restConfig.Burst = o.qps, o.burst
	leader, sharding, err := o.leader.config()
	if err != nil {
		return err
	}
	defer o.fetch.close()
	memLimit.apply()
	logMemoryLimit(logger, memLimit.bytes, memLimit.from)
	reg := prometheus.NewRegistry()
	// What every Go exporter serves: CPU, memory, file descriptors, goroutines, GC.
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	health := newHealth()
	e, hooks, err := o.newEngine(cmd, engine.Config{
		RESTConfig: restConfig, Resources: o.resources, Namespace: o.namespace(cmd),
		LabelSelector: o.labelSelector, FieldSelector: o.fieldSelector, ScriptsDir: o.scripts,
		Resync: o.resync, HandlerTimeout: o.handlerTimeout, Debounce: o.debounce, DryRun: o.dryRun,
		UnhealthyAfter: o.unhealthyAfter, PermissionCheckInterval: o.permissionCheckInterval(), StreamingLists: o.streamingLists, LeaderElection: leader, Sharding: sharding, ShardCache: o.leader.shardCache, PaceGC: true, Logger: logger, Registerer: reg,
		MemoryLimit: memLimit.bytes, MaxBacklog: o.maxBacklog, ConnectionHealth: o.connectionHealth(), MetricSeriesLimit: o.metricSeriesLimit,
		MetricCollectTimeout: o.metricCollect,
		TraceRecords:         traceRecords(o.traceRecords), Fetch: o.fetch.forScript,
		Store: o.store.opened, OutboxLease: o.outboxLease,
	})
	if err != nil {
		return err
	}
	defer hooks.stop()
	stopDebug, err := o.serveDebug(cmd, e, hooks, restConfig, level, logger)
	if err != nil {
		return err
	}
	defer stopDebug()
	health.setReadiness(e.Ready)
	if o.metricsAddr != "" {
		// Bound before anything else starts: a port in use is a start-up error, not a log line.
		l, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			return fmt.Errorf("serve metrics on %s: %w", o.metricsAddr, err)
		}
		srv := &http.Server{Handler: health.mux(reg), ReadHeaderTimeout: 5 * time.Second}
		served := make(chan struct{})
		go func() {
			defer close(served)
			serve(srv, l, logger)
		}()
		defer func() {
			_ = srv.Close()
			<-served
		}()
	}
	err = hooks.runEngine(cmd.Context(), e)
	logger.Info("stopped")
	return err
}

// newEngine builds the engine on cfg with the admission webhooks the --webhook-* flags ask
// for, and starts those (the engine's Run is the caller's); hooks.stop ends them, nil-safe.
func (o *options) newEngine(cmd *cobra.Command, cfg engine.Config) (*engine.Engine, *webhooks, error) {
	hooks, parts, err := o.webhook.newWebhooks(cmd.Context(), cfg.RESTConfig, o.dryRun, cfg.Logger)
	if err != nil {
		return nil, nil, err
	}
	cfg.OnAdmission = hooks.changed
	cfg.Admission = o.webhook.admission(o.dryRun, podNamespace(), podNamespace())
	if onReady := cfg.OnReady; hooks != nil {
		cfg.OnReady = func() {
			hooks.ready()
			if onReady != nil {
				onReady()
			}
		}
	}
	e, err := engine.New(cfg)
	if err != nil {
		if parts != nil {
			_ = parts.ln.Close()
		}
		return nil, nil, err
	}
	if hooks != nil {
		hooks.start(e, parts, cfg.Logger, cfg.Registerer)
	}
	return e, hooks, nil
}

// restConfig finds the cluster as kubectl does; with no kubeconfig anywhere, and not in a pod,
// it says where it looked rather than letting client-go fall back to localhost:8080.
func (o *options) restConfig() (*rest.Config, error) {
	loader := o.kube.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	server := o.kube.APIServer != nil && *o.kube.APIServer != ""
	if len(raw.Clusters) == 0 && !server {
		if _, err := rest.InClusterConfig(); err != nil {
			where := loader.ConfigAccess().GetLoadingPrecedence()
			return nil, fmt.Errorf("load kubeconfig: no kubeconfig found (looked in %s, and for an in-cluster "+
				"service account: %w); pass --kubeconfig, set $KUBECONFIG, or run in a pod", strings.Join(where, ", "), err)
		}
	}
	cfg, err := o.kube.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return cfg, nil
}

// connectionHealth is the engine's setting for the --http2-* flags; a read-idle timeout of 0
// turns our check off.
func (o *options) connectionHealth() dynamicinformer.ConnectionHealth {
	h := dynamicinformer.ConnectionHealth{ReadIdleTimeout: o.readIdle, PingTimeout: o.pingTimeout}
	if h.ReadIdleTimeout == 0 {
		h.ReadIdleTimeout = -1
	}
	return h
}

func serve(srv *http.Server, l net.Listener, logger *slog.Logger) {
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("metrics server failed", "error", err.Error())
	}
}

// logMemoryLimit says which memory limit the guard works to, or that it is off.
func logMemoryLimit(logger *slog.Logger, bytes int64, from string) {
	if bytes == 0 {
		logger.Info("memory guard off: no --memory-limit, GOMEMLIMIT or container memory limit")
		return
	}
	logger.Info("memory limit", "limit_bytes", bytes, "from", from)
}

// namespace is --namespace when given, else "" (every namespace): the kubeconfig's context
// namespace does not narrow the watch.
func (o *options) namespace(cmd *cobra.Command) string {
	if cmd.Flags().Changed("namespace") {
		return *o.kube.Namespace
	}
	return ""
}

// permissionCheckInterval is the engine's: --permission-check-interval 0 (or less) turns the
// check off, which the engine spells as a negative interval.
func (o *options) permissionCheckInterval() time.Duration {
	if o.permissionCheck <= 0 {
		return -1
	}
	return o.permissionCheck
}
