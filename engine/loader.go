package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

const (
	// syncWarnAfter is when a version still waiting for its informers says so.
	syncWarnAfter = 30 * time.Second
	// drainLimit bounds how long a retired version may keep handling its queued events.
	drainLimit = time.Minute
)

// target is one resolved watch of a version.
type target struct {
	resource dynamicinformer.Resource
	key      dynamicinformer.Key
}

func (e *Engine) onPluginEvent(ev plugins.Event) {
	delete(e.waiting, ev.Source.Name) // a newer content or a removal supersedes a retry
	switch ev.Kind {
	case plugins.Loaded:
		if !e.watcherSynced {
			e.initial[ev.Source.Name] = true
		}
		e.load(ev.Source)
	case plugins.Removed:
		e.unload(ev.Source.Name)
	case plugins.Synced:
		e.watcherSynced = true
		e.checkReady()
	}
}

// load builds and subscribes a new version; the old one keeps serving until it has synced.
func (e *Engine) load(src plugins.Source) { e.loadOrReport(src, "") }

// loadOrReport is load; a failure whose message equals lastErr (a retry failing the same way)
// is logged at debug level only, so a script waiting for a CRD does not flood the log.
func (e *Engine) loadOrReport(src plugins.Source, lastErr string) {
	logger := e.logger.With("script", src.Name, "version", src.Hash)
	v, err := e.newVersion(src)
	if err != nil {
		e.loadFailed(logger, src, err, lastErr)
		return
	}
	p := e.plugins[src.Name]
	if p == nil {
		p = &plugin{}
		e.plugins[src.Name] = p
	}
	if p.pending != nil {
		e.retire(p.pending, false) // superseded before it synced
	}
	p.pending = v
	go func() {
		if v.waitSynced(syncWarnAfter) {
			select {
			case e.synced <- v:
			case <-v.abort:
			}
		}
	}()
}

func (e *Engine) loadFailed(logger *slog.Logger, src plugins.Source, err error, lastErr string) {
	attrs := []any{"error", err.Error(), "running_version", e.runningVersion(src.Name)}
	if err.Error() == lastErr {
		logger.Debug("script still not loaded", attrs...)
	} else {
		logger.Error("script not loaded", attrs...)
		e.stats.loads.WithLabelValues(src.Name, "failed").Inc()
	}
	if errors.Is(err, dynamicinformer.ErrUnknownResource) {
		e.waiting[src.Name] = waitingScript{src: src, err: err.Error()}
		if lastErr == "" {
			logger.Info("will retry the script until its resource is served", "every", e.cfg.RetryUnknownResources.String())
		}
	}
	e.initialDone(src.Name)
}

// waitingScript is a script that failed on a resource the server does not serve (yet).
type waitingScript struct {
	src plugins.Source
	err string
}

// retryWaiting loads again the scripts that failed on an unknown resource.
func (e *Engine) retryWaiting() {
	for name, w := range e.waiting {
		delete(e.waiting, name)
		e.loadOrReport(w.src, w.err)
	}
}

// onSynced makes a synced version current and retires the one it replaces.
func (e *Engine) onSynced(v *version) {
	p := e.plugins[v.name]
	if p == nil || p.pending != v {
		return // superseded or unloaded meanwhile
	}
	old := p.current
	p.current, p.pending = v, nil
	result := "loaded"
	if old != nil {
		result = "reloaded"
		e.retire(old, true)
	}
	startReconciler(v, old)
	v.logger.Info("script "+result, "objects", v.store.size())
	e.stats.loads.WithLabelValues(v.name, result).Inc()
	e.initialDone(v.name)
}

func (e *Engine) unload(name string) {
	p := e.plugins[name]
	if p == nil {
		return
	}
	delete(e.plugins, name)
	version := "none"
	if p.pending != nil {
		e.retire(p.pending, false)
	}
	if p.current != nil {
		version = p.current.hash
		e.retire(p.current, true)
	}
	e.logger.Info("script unloaded", "script", name, "version", version)
	e.stats.loads.WithLabelValues(name, "unloaded").Inc()
	e.initialDone(name)
}

// startReconciler starts v's reconcile workers once the version it replaces has no reconcile
// running, so one key is never reconciled by two versions at once. Keys enqueued meanwhile
// wait, deduplicated, in v's queue.
func startReconciler(v, old *version) {
	if v.reconciler == nil {
		return
	}
	if old == nil || old.reconciler == nil {
		v.reconciler.start()
		return
	}
	go func() {
		old.reconciler.wait()
		v.reconciler.start()
	}()
}

// retire stops v; with drain its queued events and reconcile keys are still handled, within
// drainLimit.
func (e *Engine) retire(v *version, drain bool) {
	v.retire(drain)
	e.retiring.Go(func() {
		finished := make(chan struct{})
		go func() {
			<-v.done
			if v.reconciler != nil {
				v.reconciler.wait()
			}
			close(finished)
		}()
		select {
		case <-finished:
		case <-time.After(drainLimit):
			v.logger.Warn("retired version still busy; interrupting it")
			v.stop()
			<-finished
		}
		e.stats.versions.Dec()
		e.stats.backlog.remove(v)
	})
}

// runningVersion names the version that keeps serving a script after a failed load.
func (e *Engine) runningVersion(name string) string {
	if p := e.plugins[name]; p != nil && p.current != nil {
		return p.current.hash
	}
	return "none"
}

func (e *Engine) initialDone(name string) {
	delete(e.initial, name)
	e.checkReady()
}

func (e *Engine) checkReady() {
	if e.ready || !e.watcherSynced || len(e.initial) > 0 {
		return
	}
	e.ready = true
	e.logger.Info("ready", "scripts", len(e.plugins))
	if e.cfg.OnReady != nil {
		e.cfg.OnReady()
	}
}

// newVersion compiles, instantiates, validates and subscribes one script content.
func (e *Engine) newVersion(src plugins.Source) (*version, error) {
	prog, err := scripting.Compile(src.Name, src.Content)
	if err != nil {
		return nil, err
	}
	// scripting tags its own records with the script name; the engine's need it added.
	scriptLogger := e.logger.With("version", src.Hash)
	logger := scriptLogger.With("script", src.Name)
	opts := scripting.Options{Logger: scriptLogger, Timeout: e.cfg.HandlerTimeout, Client: e.client.withLogger(logger)}
	script, err := prog.Instantiate(opts)
	if err != nil {
		return nil, err
	}
	def := script.Definition()
	targets, err := e.targets(src.Name, def)
	if err != nil {
		return nil, err
	}
	v := &version{
		name: src.Name, hash: src.Hash, program: prog, script: script, def: def, logger: logger,
		store: newStore(def.Indexers), queue: newQueue[event](), stats: e.stats,
		indexFailed: map[objectKey]bool{},
		abort:       make(chan struct{}), synced: make(chan struct{}), done: make(chan struct{}),
	}
	v.intake = v.queue
	if len(def.Indexers) > 0 {
		if v.indexer, err = prog.Instantiate(opts); err != nil {
			return nil, fmt.Errorf("instantiate indexer: %w", err)
		}
		v.intake = newQueue[event]()
	}
	if def.Reconcile {
		if v.reconciler, err = e.newReconciler(v, prog, opts, targets[0]); err != nil {
			return nil, err
		}
	}
	// The worker starts first so it handles the initial adds while client-go is still
	// delivering them: on a large cache that overlap is most of a reload's latency.
	v.start()
	if err := v.subscribe(e.factory, targets, e.resolveName); err != nil {
		v.stop()
		return nil, err
	}
	e.stats.versions.Inc()
	e.stats.backlog.add(v)
	return v, nil
}

func (e *Engine) newReconciler(v *version, prog *scripting.Program, opts scripting.Options, t target) (*reconciler, error) {
	scripts := make([]*scripting.Script, max(1, v.def.Concurrency))
	for i := range scripts {
		s, err := prog.Instantiate(opts)
		if err != nil {
			return nil, fmt.Errorf("instantiate reconcile worker: %w", err)
		}
		scripts[i] = s
	}
	view := &cacheView{store: v.store, resource: t.resource.String(), resolve: e.resolveName}
	return newReconciler(v.name, scripts, v.def.MaxRetries, view, v.logger, e.stats), nil
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
	for _, spec := range specs {
		t, err := e.target(spec)
		if err != nil {
			return nil, fmt.Errorf("%s: watch %q: %w", name, spec.Resource, err)
		}
		if !seen[t.key] {
			seen[t.key] = true
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
	return target{resource: res, key: key}, nil
}

func (e *Engine) resolveName(name string) (string, error) {
	res, err := e.resolver.Resolve(name)
	if err != nil {
		return "", err
	}
	return res.String(), nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
