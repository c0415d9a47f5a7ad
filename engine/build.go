package engine

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// Building a version: compile, instantiate, validate, resolve its watches, then hand the
// rest to package engine/internal/version (version.New) and subscribe.

// loaded is one loaded content of a script as the loader holds it: the running version
// (package engine/internal/version) and what only the loader uses beside it.
type loaded struct {
	ver       *version.Version // not embedded: a *loaded must never pass for the version where records match by pointer
	src       plugins.Source   // to load again on becoming leader
	allocMark uint64           // the collector's mark when building began
	gcLift    func()           // ends the collector's lift for this load (internal/gcpace); idempotent
	// afterDrain runs once this version, retired by a reload, has drained: it ends its
	// successor's lift, so the GC percent goes back once the reload's work is all done.
	afterDrain func()
	after      <-chan struct{} // the finished of the version it replaced (not the version: its memory must go)
	finished   chan struct{}   // closed when retired and closed, after its predecessor's
	// prog and opts make the runtime of its audit (audit.go), apart from the version's own.
	prog *scripting.Program
	opts scripting.Options
}

// Released is closed once v has closed its runtimes and is done (memguard.Version).
func (v *loaded) Released() <-chan struct{} { return v.finished }

// newVersion compiles, instantiates, validates and subscribes one script content.
func (e *Engine) newVersion(src plugins.Source) (*loaded, error) {
	started := time.Now()
	allocs := e.gc.Mark()
	lift := e.gc.Lift() // ended when the version closes, or once synced (onSynced)
	prog, err := scripting.CompileIn(e.cfg.ScriptsDir, src.Name, src.Content)
	if err != nil {
		lift()
		return nil, err
	}
	// scripting tags its own records with the script name; the engine's need it added.
	scriptLogger := e.logger.With("version", src.Hash)
	logger := scriptLogger.With("script", src.Name)
	outbox, poke := e.scriptOutbox(src.Name)
	opts := scripting.Options{Logger: scriptLogger, Timeout: e.cfg.HandlerTimeout, Client: e.refusals(src.Name, e.newClient(logger)), Now: e.clock.Now,
		HTTP: e.cfg.Fetch(src.Name), OnRequest: e.stats.fetchObserver(src.Name), Clock: e.clock, OnParked: e.onParked,
		Store: e.scriptStore(src.Name), Outbox: outbox}
	workerOpts, recorder := e.tapped(opts)
	script, err := prog.Instantiate(workerOpts)
	if err != nil {
		lift()
		return nil, err
	}
	def := script.Definition()
	e.storeOwners.declare(src.Name, def.Store.Shared)
	if err := e.checkMetricNames(src.Name, def); err != nil {
		script.Close()
		lift()
		return nil, err
	}
	targets, err := e.targets(src.Name, def)
	if err == nil {
		err = checkLockout(src.Name, def, targets)
	}
	if err == nil {
		err = e.partition(src.Name, def, targets)
	}
	if err != nil {
		script.Close()
		lift()
		return nil, err
	}
	unwatched := !scripting.NeedsInformers(prog, def)
	ver, err := version.New(version.Config{
		Name: src.Name, Hash: src.Hash, Program: prog, Options: opts, Script: script, Recorder: recorder, Def: def,
		Targets: targets, Unwatched: unwatched, Started: started, Standby: e.lead != nil && !e.lead.Leading(), Lead: e.lead, Shard: e.shard,
		Book: e.book, Pauses: e.pauses, Logger: logger, MaxBacklog: e.cfg.MaxBacklog,
		Handler:       func(handler string) *handlerMetrics { return e.stats.handler(src.Name, handler) },
		Coalesced:     func() prometheus.Counter { return e.stats.Coalesced(src.Name) },
		ScriptMetrics: e.scriptMetrics, Clock: e.clock, Tap: e.tapped,
		Acquire: func(k dynamicinformer.Key) (version.Informer, error) { return e.factory.Acquire(k) },
		Fanouts: &e.fanouts, Resolve: e.resolveName, OnClose: lift, Outbox: e.outboxConfig(src.Name, def, poke, opts.Client),
	})
	if err != nil {
		return nil, err // New closed the script, and so ended the lift
	}
	v := &loaded{ver: ver, src: src, allocMark: allocs, gcLift: lift, finished: make(chan struct{}), prog: prog, opts: opts}
	e.setNeeds(src.Name, prog, def) // checked while it syncs: a watch it may not list is named at once
	if err := e.start(v, targets); err != nil {
		return nil, err
	}
	return v, nil
}

// start runs v and subscribes it to its informers, and records it live with its watches. On error v is
// being closed on a retiring goroutine.
func (e *Engine) start(v *loaded, targets []version.Target) error {
	// The worker starts first so it handles the initial adds while client-go is still
	// delivering them: on a large cache that overlap is most of a reload's latency.
	v.ver.Start()
	// Before the informers start, so their first failure names v's script. An unwatched
	// version has none: its watches only say what its webhooks cover (and what explain reads).
	e.needs.add(v, v.ver.Informed())
	if err := v.ver.Subscribe(); err != nil {
		e.needs.remove(v)
		e.retiring.Go(v.ver.Close) // the worker may be in a call: not on the loader
		return err
	}
	e.needs.subscribed(v, v.ver.Subscriptions())
	e.book.Added(v.ver.Script(), v.ver.Hash(), v.ver, watchesOf(targetKeys(targets)))
	e.stats.VersionAdded(v.ver)
	return nil
}

// tapped returns opts whose logger and client feed a new tap, and the recording side of the
// Script made with them; with recording off, opts unchanged and a Worker that records
// nothing (it still shows the call in flight).
func (e *Engine) tapped(opts scripting.Options) (scripting.Options, *trace.Worker) {
	if e.trace == nil {
		return opts, trace.NewWorker(nil, nil)
	}
	opts, tap := trace.Tapped(opts, e.cfg.DryRun, k8sclient.WithForcedDryRun)
	return opts, trace.NewWorker(e.trace, tap)
}

// targets resolves a definition's watch list, filling what it leaves empty from the command
// line, and drops duplicates.
func (e *Engine) targets(name string, def scripting.Definition) ([]version.Target, error) {
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
	var out []version.Target
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

func (e *Engine) target(spec scripting.WatchSpec) (version.Target, error) {
	res, err := e.resolver.Resolve(spec.Resource)
	if err != nil {
		return version.Target{}, err
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
	return version.Target{Resource: res, Key: key}, nil
}

// partition sets the partition of each of targets' keys (cachePartition).
func (e *Engine) partition(name string, def scripting.Definition, targets []version.Target) error {
	part, err := e.cachePartition(name, def, targets)
	for i := range targets {
		targets[i].Key.Partition = part
	}
	return err
}

func (e *Engine) resolveName(name string) (string, error) {
	res, err := e.resolver.Resolve(name)
	if err != nil {
		return "", err
	}
	return res.String(), nil
}

func targetKeys(targets []version.Target) []dynamicinformer.Key {
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

// RequestMemory asks v's runtimes for a measurement (memguard.Version).
func (v *loaded) RequestMemory() { v.ver.RequestMemory() }

// Memory is what v's runtimes measured last (memguard.Version).
func (v *loaded) Memory() (bytes int64, seq uint64, truncated bool) { return v.ver.Memory() }
