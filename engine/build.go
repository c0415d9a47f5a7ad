package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/coalesce"
	"github.com/jsinformer/jsinformer/engine/internal/reconcile"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// Building a version: compile, instantiate, validate, resolve its watches and subscribe.

// newVersion compiles, instantiates, validates and subscribes one script content.
func (e *Engine) newVersion(src plugins.Source) (*version, error) {
	started := time.Now()
	allocs := e.gc.Mark()
	lift := e.gc.Lift() // ended by v.close, or once synced (onSynced)
	prog, err := scripting.CompileIn(e.cfg.ScriptsDir, src.Name, src.Content)
	if err != nil {
		lift()
		return nil, err
	}
	// scripting tags its own records with the script name; the engine's need it added.
	scriptLogger := e.logger.With("version", src.Hash)
	logger := scriptLogger.With("script", src.Name)
	opts := scripting.Options{Logger: scriptLogger, Timeout: e.cfg.HandlerTimeout, Client: e.newClient(logger), Now: e.clock.Now}
	workerOpts, recorder := e.tapped(opts)
	script, err := prog.Instantiate(workerOpts)
	if err != nil {
		lift()
		return nil, err
	}
	def := script.Definition()
	if err := e.checkMetricNames(src.Name, def); err != nil {
		script.Close()
		lift()
		return nil, err
	}
	targets, err := e.targets(src.Name, def)
	if err != nil {
		script.Close()
		lift()
		return nil, err
	}
	v := &version{
		book: e.book, src: src, standby: e.lead != nil && !e.lead.Leading(), lead: e.lead, shard: e.shard,
		name: src.Name, hash: src.Hash, started: started, allocMark: allocs, gcLift: lift, script: script, def: def, logger: logger,
		store: scriptcache.New(def.Indexers), queue: newEventQueue(),
		abort: make(chan struct{}), synced: make(chan struct{}), done: make(chan struct{}), finished: make(chan struct{}),
		ownerNamespaced: targets[0].Resource.Namespaced,
		insp:            newInspect(recorder, e.pauses),
	}
	v.retired, v.endRetired = context.WithCancel(context.Background())
	// From here v owns every runtime made for it: v.close releases them on any failure.
	if err := e.addRuntimes(v, prog, opts, targets[0]); err != nil {
		v.close() // nothing runs yet: closing is immediate
		return nil, err
	}
	// The worker starts first so it handles the initial adds while client-go is still
	// delivering them: on a large cache that overlap is most of a reload's latency.
	v.start()
	e.needs.add(v, targets) // before the informers start, so their first failure names v's script
	if err := v.subscribe(e.factory, &e.fanouts, targets, e.resolveName); err != nil {
		e.needs.remove(v)
		e.retiring.Go(v.close) // the worker may be in a call: not on the loader
		return nil, err
	}
	v.insp.SetSubscriptions(v.subs)
	e.needs.subscribed(v, v.subs)
	e.book.Added(v.name, v.hash, v, watchesOf(targetKeys(targets)))
	e.stats.VersionAdded(v)
	return v, nil
}

// addRuntimes gives v its index stage and reconciler, when the script has them, and resolves
// its handler metrics.
func (e *Engine) addRuntimes(v *version, prog *scripting.Program, opts scripting.Options, first target) error {
	v.scriptMetrics = e.scriptMetrics.NewVersion(v.name, v.def.Metrics, v, v.logger) // before defines(eventCollect) reads it
	for kind, name := range handlerNames {
		if v.defines(eventKind(kind)) {
			v.metrics[kind] = e.stats.handler(v.name, name)
		}
	}
	v.intake = v.queue
	if len(v.def.Indexers) > 0 {
		var err error
		if v.indexer, err = newIndexStage(prog, opts, v.def.Indexers, v.logger); err != nil {
			return err
		}
		v.intake = newEventQueue()
	}
	if e.cfg.MaxBacklog > 0 {
		coalesced := e.stats.Coalesced(v.name)
		v.queue.SetOverflow(coalesce.New(e.cfg.MaxBacklog, overload, v.logger, coalesced))
		if v.intake != v.queue {
			v.intake.SetOverflow(coalesce.New(e.cfg.MaxBacklog, overload, v.logger, coalesced))
		}
	}
	if v.def.Reconcile && !v.standby {
		var err error
		if v.reconciler, err = e.newReconciler(v, prog, opts, first); err != nil {
			return err
		}
		v.enqueue = v.ctxEnqueue
	}
	return nil
}

// reconciler is a version's reconcile workers (package engine/internal/reconcile).
type reconciler = reconcile.Workers[*scripting.Script]

// newReconciler builds v's reconcile workers, one runtime each, on the first watched
// resource's cache and the engine's clock.
func (e *Engine) newReconciler(v *version, prog *scripting.Program, opts scripting.Options, t target) (*reconciler, error) {
	scripts := make([]*scripting.Script, max(1, v.def.Concurrency))
	workers := make([]*trace.Worker, len(scripts))
	for i := range scripts {
		tappedOpts, w := e.tapped(opts)
		workers[i] = w
		s, err := prog.Instantiate(tappedOpts)
		if err != nil {
			for _, made := range scripts[:i] {
				made.Close()
			}
			return nil, fmt.Errorf("instantiate reconcile worker: %w", err)
		}
		scripts[i] = s
	}
	return reconcile.New(reconcile.Config[*scripting.Script]{
		Name: v.name, Version: v.hash, Queue: e.clock.NewQueue(v.name), Runtimes: scripts, Recorders: workers,
		MaxRetries: v.def.MaxRetries, Logger: v.logger, Metrics: e.stats.handler(v.name, "reconcile"), Sink: v.metricSink(),
		Cache: &scriptcache.View{Store: v.store, Resource: t.Resource.String(), Resolve: e.resolveName},
		Begin: v.begin, Handles: v.handles, Hold: func() bool { return e.pauses.Wait(v.name, v.abort) },
	}), nil
}

// targets resolves a definition's watch list, filling what it leaves empty from the command
// line, and drops duplicates.
func (e *Engine) targets(name string, def scripting.Definition) ([]target, error) {
	specs := def.Watch
	if specs == nil {
		for _, r := range e.defaults {
			specs = append(specs, scripting.WatchSpec{Resource: r.String()})
		}
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%s: the script has no 'watch' and the runner was started without --gvr", name)
	}
	seen := map[dynamicinformer.Key]bool{}
	var out []target
	for i, spec := range specs {
		t, err := e.target(spec)
		if err != nil {
			return nil, fmt.Errorf("%s: watch %q: %w", name, spec.Resource, err)
		}
		t.Watch, t.Enqueue = i, spec.Enqueue
		if !seen[t.Key] {
			seen[t.Key] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func (e *Engine) target(spec scripting.WatchSpec) (target, error) {
	res, err := e.resolver.Resolve(spec.Resource)
	if err != nil {
		return target{}, err
	}
	key := dynamicinformer.Key{
		GVR:           res.GVR,
		Namespace:     firstNonEmpty(spec.Namespace, e.cfg.Namespace),
		LabelSelector: firstNonEmpty(spec.LabelSelector, e.cfg.LabelSelector),
		FieldSelector: firstNonEmpty(spec.FieldSelector, e.cfg.FieldSelector),
	}
	if !res.Namespaced {
		key.Namespace = ""
	}
	return target{Resource: res, Key: key}, nil
}

func (e *Engine) resolveName(name string) (string, error) {
	res, err := e.resolver.Resolve(name)
	if err != nil {
		return "", err
	}
	return res.String(), nil
}

func targetKeys(targets []target) []dynamicinformer.Key {
	keys := make([]dynamicinformer.Key, len(targets))
	for i, t := range targets {
		keys[i] = t.Key
	}
	return keys
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
