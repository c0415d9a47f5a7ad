package engine

import (
	"errors"
	"log/slog"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/status"
)

const (
	// syncWarnAfter is when a version still waiting for its informers says so.
	syncWarnAfter = 30 * time.Second
	// drainLimit bounds how long a retired version may keep handling its queued events.
	drainLimit = time.Minute
)

func (e *Engine) onPluginEvent(ev plugins.Event) {
	if ev.Kind == plugins.Settled {
		e.onSettled(ev.Source)
		return
	}
	delete(e.waiting, ev.Source.Name)    // a newer content or a removal supersedes a retry,
	delete(e.awaitRing, ev.Source.Name)  // a wait for the ring,
	e.failures.Supersede(ev.Source.Name) // and a failure held until its content settled
	switch ev.Kind {
	case plugins.Loaded:
		e.storeOwners.present(ev.Source.Name)
		if !e.watcherSynced {
			e.initial[ev.Source.Name] = true
		}
		e.load(ev.Source)
	case plugins.Removed:
		e.storeOwners.remove(ev.Source.Name)
		e.failures.Forget(ev.Source.Name)
		e.liftStop(ev.Source.Name)
		e.unload(ev.Source.Name)
		e.stats.Forget(ev.Source.Name)
		e.stats.fetch.Forget(ev.Source.Name)
	case plugins.Synced:
		e.watcherSynced = true
		e.checkReady()
	}
}

// load builds and subscribes a new version; the old one keeps serving until it has synced.
// The content of the version serving (saved back after a broken save) changes nothing.
func (e *Engine) load(src plugins.Source) {
	if e.stoppedForMemory(src) {
		e.initialDone(src.Name)
		return
	}
	if p := e.plugins[src.Name]; p != nil && p.current != nil && p.current.ver.Hash() == src.Hash {
		if p.pending != nil {
			e.retire(p.pending, false)
			p.pending = nil
		}
		e.failures.Forget(src.Name)
		e.logger.Info("script content is the running version again; nothing to reload", "script", src.Name, "version", src.Hash)
		e.book.Restored(src.Name, src.Hash)
		e.initialDone(src.Name)
		return
	}
	e.loadOrReport(src, "")
}

// loadOrReport is load; a failure whose message equals lastErr (a retry failing the same way)
// is logged at debug level only, so a script waiting for a CRD does not flood the log.
func (e *Engine) loadOrReport(src plugins.Source, lastErr string) {
	logger := e.logger.With("script", src.Name, "version", src.Hash)
	v, err := e.newVersion(src)
	if errors.Is(err, errAwaitRing) {
		logger.Info("partitioned script waits until the replica has joined its shard ring")
		e.awaitRing[src.Name] = src
		return
	}
	if err != nil {
		e.loadFailed(logger, src, err, lastErr)
		return
	}
	e.failures.Forget(src.Name)
	p := e.plugins[src.Name]
	if p == nil {
		p = &plugin{}
		e.plugins[src.Name] = p
	}
	if p.pending != nil {
		e.retire(p.pending, false) // superseded before it synced
	}
	p.pending = v
	v.ver.OnSynced(syncWarnAfter, func(abort <-chan struct{}) { // on a goroutine v.Close joins
		select {
		case e.synced <- v:
		case <-abort:
		}
	})
}

func (e *Engine) loadFailed(logger *slog.Logger, src plugins.Source, err error, lastErr string) {
	if e.failures.Hold(logger, src, err) {
		return
	}
	attrs := []any{"error", err.Error(), "running_version", e.runningVersion(src.Name)}
	waiting := errors.Is(err, dynamicinformer.ErrUnknownResource) // a CRD not installed yet, or a typo
	switch {
	case err.Error() == lastErr:
		logger.Debug("script still not loaded", attrs...)
	case waiting:
		logger.Warn("script waiting for its resource to be served", append(attrs, "retry_every", e.cfg.RetryUnknownResources.String())...)
		e.stats.LoadFailed(src.Name)
	default:
		logger.Error("script not loaded", attrs...)
		e.stats.LoadFailed(src.Name)
	}
	e.failures.DidReport(src)
	if err.Error() != lastErr {
		result := status.LoadFailed
		if waiting {
			result = status.LoadWaiting
		}
		e.book.Failed(src.Name, src.Hash, time.Now(), errorStatus(err), errors.Is(err, dynamicinformer.ErrUnknownResource))
		e.book.Loaded(src.Name, status.LoadStatus{Hash: src.Hash, Result: result, Error: errorStatus(err)})
	}
	if waiting {
		e.waiting[src.Name] = waitingScript{src: src, err: err.Error()}
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
func (e *Engine) onSynced(v *loaded) {
	p := e.plugins[v.ver.Script()]
	if p == nil || p.pending != v {
		return // superseded or unloaded meanwhile
	}
	old := p.current
	p.current, p.pending = v, nil
	e.publishAdmission(v.ver.Script(), false)                    // before old retires: its calls move to v
	e.scriptMetrics.Serve(v.ver.ScriptMetrics(), v.ver.Script()) // the switch, as scrapes see it
	result := "loaded"
	if old != nil {
		result = "reloaded"
	}
	took := time.Since(v.ver.Started())
	v.ver.Serve(status.LoadStatus{Hash: v.ver.Hash(), Result: status.LoadResult(result), TookSeconds: took.Seconds(), Objects: v.ver.Store().Size()})
	v.ver.StartSchedules()
	v.ver.StartOutbox()
	e.needs.synced(v)
	if old != nil {
		e.gc.Loaded(v.allocMark)
		old.afterDrain = v.gcLift
		e.retire(old, true)
	} else if v.gcLift != nil {
		v.gcLift()
	}
	prev := old
	if prev == nil {
		prev, p.stopped = p.stopped, nil
	}
	if prev != nil {
		v.after = prev.finished
	}
	e.startReconciler(v, prev)
	v.ver.Logger().Info("script "+result, "objects", v.ver.Store().Size(), "took", took.Round(time.Millisecond).String())
	e.stats.Loaded(v.ver.Script(), result, took)
	e.initialDone(v.ver.Script())
	e.reportListed() // a partitioned version caching what the ring needs now serves
}

func (e *Engine) unload(name string) {
	p := e.plugins[name]
	if p == nil {
		e.publishAdmission(name, false)
		e.book.Removed(name) // a file that never loaded, or one stopped by the memory guard
		return
	}
	delete(e.plugins, name)
	e.forgetNeeds(name)
	e.publishAdmission(name, false)
	running := "none"
	if p.pending != nil {
		e.retire(p.pending, false)
	}
	if p.current != nil {
		running = p.current.ver.Hash()
		e.retire(p.current, true)
	}
	e.logger.Info("script unloaded", "script", name, "version", running)
	e.book.Loaded(name, status.LoadStatus{Hash: running, Result: status.LoadUnloaded})
	e.book.Removed(name)
	e.stats.counts.Forget(name)
	e.initialDone(name)
}

// startReconciler starts v's reconcile workers once the version it replaces is finished, and
// with it every version before (see retire), so one key is never reconciled by two versions at
// once and never by an older version after a newer one. Keys enqueued meanwhile wait,
// deduplicated, in v's queue. The waiting goroutine is one of the retiring ones Run joins.
func (e *Engine) startReconciler(v, old *loaded) {
	if !v.ver.Reconciles() {
		return
	}
	if old == nil {
		v.ver.StartReconcile()
		return
	}
	e.retiring.Go(func() {
		<-old.finished
		v.ver.StartReconcile() // does nothing if v was retired meanwhile
	})
}

// retire stops v; with drain its queued events and reconcile keys are still handled, within
// drainLimit. Safe to call again: a retired version is left to the goroutine ending it.
func (e *Engine) retire(v *loaded, drain bool) {
	if !v.ver.Retire(drain) {
		return
	}
	e.ending(v, drain, false)
}

// drop retires v without draining and stops it at once: the call running is interrupted and
// the events and reconcile keys queued are skipped; it returns how many were.
func (e *Engine) drop(v *loaded) (events, keys int) {
	if !v.ver.Retire(false) {
		return 0, 0
	}
	events, keys = v.ver.Drop()
	e.ending(v, false, true)
	return events, keys
}

// ending hands a retired v to a retiring goroutine (one Run joins), which waits for v to
// finish, within drainLimit when draining and the running call's own deadline otherwise,
// then closes it (v.Close: every goroutine joined, every runtime closed) and marks it done,
// after its predecessors.
func (e *Engine) ending(v *loaded, drain, dropped bool) {
	e.needs.remove(v)
	e.scriptMetrics.Withdraw(v.ver.ScriptMetrics())
	v.ver.SetState(version.StateDraining)
	limit := drainLimit
	if !drain {
		limit = e.cfg.HandlerTimeout + time.Second // the running call's own deadline, and some
	}
	e.retiring.Go(func() {
		if !dropped && !v.ver.WaitIdle(limit) {
			v.ver.Logger().Warn("retired version still busy; interrupted it")
		}
		v.ver.Close()
		e.stats.VersionEnded(v.ver) // the value VersionAdded was given
		if drain {
			if v.afterDrain != nil {
				v.afterDrain() // the GC percent back (package engine/internal/gcpace), before settle reads the goal
			}
			e.gc.Settle() // the old version's garbage is now collectable
		}
		if v.after != nil {
			<-v.after // the chain: v counts as finished only after its predecessors
		}
		v.ver.SetState(version.StateDone)
		close(v.finished)
	})
}

// runningVersion names the version that keeps serving a script after a failed load.
func (e *Engine) runningVersion(name string) string {
	if p := e.plugins[name]; p != nil && p.current != nil {
		return p.current.ver.Hash()
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
	e.readyOnce.Store(true)
	e.logger.Info("ready", "scripts", len(e.plugins))
	e.book.Bump()
	e.retiring.Go(e.gc.InitialSynced)
	if e.cfg.OnReady != nil {
		e.cfg.OnReady()
	}
}
