package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
	"github.com/jsinformer/jsinformer/engine/internal/schedule"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// version is one loaded content of one script file. Its worker goroutine owns the Script
// (one goja runtime) and is the only writer of its store; client-go listeners only enqueue.
//
// A script with index functions gets a second stage ahead of the worker (package
// engine/internal/version's IndexStage): it takes events from intake, computes their index
// values on runtimes of its own and passes them on to queue, in order, so the worker still
// applies values to the store in event order.
type version struct {
	name, hash string
	src        plugins.Source // to load again on becoming leader
	standby    bool           // built while not leading: calls nothing, ever
	lead       *leadership    // nil without leader election
	shard      shardOwner     // nil without sharding: every key is this runner's
	book       *status.Book   // the state API's record; nil in unit tests
	started    time.Time      // when building it began, for the load duration
	allocMark  uint64         // the collector's mark when building began
	gcLift     func()         // ends the collector's lift for this load (internal/gcpace); idempotent
	// afterDrain runs once this version, retired by a reload, has drained: it ends its
	// successor's lift, so the GC percent goes back once the reload's work is all done.
	afterDrain func()
	script     *scripting.Script
	indexer    *indexStage // nil without index functions (package engine/internal/version)
	def        scripting.Definition
	logger     *slog.Logger
	store      *scriptcache.Store
	subs       []*subscription         // the loader's: the worker reads scheduleCache instead
	fans       *fanout.Registry[event] // the engine's, which subs are subscribed through
	// scheduleCache is the first watched resource's cache, ctx.cache of schedules; written by
	// subscribe before the loader starts the schedules, never cleared.
	scheduleCache *scriptcache.View
	intake        *queue.Queue[event]                // client-go listeners push here; the same queue without indexer
	queue         *queue.Queue[event]                // the worker pops here
	metrics       [len(handlerNames)]*handlerMetrics // by event kind; nil for a handler not defined
	scriptMetrics *enginemetrics.Version             // the definition's metric families; nil without (metrics.go)

	reconciler  *reconciler       // nil unless the script exports reconcile
	enqueue     func(string)      // ctx.enqueue: reconciler.enqueue, nil without reconcile
	enqueueOnly func(string) bool // the worker's, while replaying gained keys: which keys to enqueue

	abort           chan struct{} // closed to stop the goroutines without draining
	haltOnce        sync.Once
	retireOnce      sync.Once
	closeOnce       sync.Once
	workerStarted   atomic.Bool     // start ran: the worker (and indexer) goroutines exist
	synced          chan struct{}   // closed when the worker has handled every initial-list add
	done            chan struct{}   // closed when the worker and indexer have returned
	finished        chan struct{}   // closed when retired and joined, after its predecessor's
	state           atomic.Int32    // a versionState
	retired         context.Context // done when retired, in either mode: stops the scheduler
	endRetired      context.CancelFunc
	schedules       *schedule.Loop  // nil without schedules or before v serves; set before the first eventSchedule
	ownerNamespaced bool            // the reconciled resource is namespaced (owner keys are ns/name)
	after           <-chan struct{} // the finished of the version it replaced (not the version: its memory must go)
	running         sync.WaitGroup  // worker, indexer and scheduler
	helpers         sync.WaitGroup  // the goroutines waiting on others: for running (done), for the sync
	insp            *versionInspect // trace, pauses, the call in flight, subscriptions (tracecall.go)
}

// subscribe acquires an informer per key and registers the version's handler on it. On
// error everything acquired so far is given back.
func (v *version) subscribe(factory Informers, fans *fanout.Registry[event], targets []target, resolve func(string) (string, error)) error {
	v.fans = fans
	for _, t := range targets {
		inf, err := factory.Acquire(t.Key)
		if err != nil {
			v.unsubscribe()
			return fmt.Errorf("watch %s: %w", t.Key, err)
		}
		sub := &subscription{Key: t.Key, Target: t, Handle: inf, Queue: v.intake}
		sub.Cache = &scriptcache.View{Store: v.store, Resource: t.Resource.String(), Resolve: resolve}
		v.store.Reserve(sub.Cache.Resource, len(inf.Informer().GetStore().ListKeys()))
		v.subs = append(v.subs, sub)
		if v.scheduleCache == nil {
			v.scheduleCache = sub.Cache
		}
		if sub.Fan, err = fans.Subscribe(sub); err != nil {
			v.unsubscribe()
			return fmt.Errorf("register handler on %s: %w", t.Key, err)
		}
		sub.Synced = sub.Fan.Synced()
	}
	return nil
}

// unsubscribe takes the subscriptions off their fanouts (the last one off an informer removes
// its registration, waiting until client-go delivers nothing more) and releases the
// informers. Afterwards the queue holds every event the version will ever get.
func (v *version) unsubscribe() {
	for _, sub := range v.subs {
		if err := v.fans.Unsubscribe(sub.Fan); err != nil {
			v.logger.Warn("remove event handler", "error", err)
		}
		sub.Handle.Release()
	}
	v.subs = nil
}

// waitSynced blocks until every registration of subs has delivered its initial list and the
// worker has handled it, or until abort. It reports whether the version synced. subs is the
// loader's copy of v.subs: the loader may clear v.subs meanwhile.
func (v *version) waitSynced(subs []*subscription, warnAfter time.Duration) bool {
	warn := time.NewTimer(warnAfter)
	defer warn.Stop()
	for _, sub := range subs {
		for done := false; !done; {
			select {
			case <-sub.Synced:
				done = true
			case <-warn.C:
				v.logger.Warn("still waiting for the informer to sync", "informer", sub.Key.String())
			case <-v.abort:
				return false
			}
		}
	}
	v.intake.Push(event{Kind: eventSynced})
	select {
	case <-v.synced:
		return true
	case <-v.abort:
		return false
	}
}

// start runs the worker, and the indexer when the script has index functions.
func (v *version) start() {
	v.workerStarted.Store(true)
	v.running.Go(v.work)
	if v.indexer != nil {
		v.running.Go(func() { v.indexer.Run(v.intake, v.queue, v.abort) })
	}
	v.helpers.Go(func() {
		v.running.Wait()
		close(v.done)
	})
}

// work handles queued events in order until the queue is closed and drained, or abort.
func (v *version) work() {
	defer v.script.Close()
	for {
		ev, ok := v.queue.Pop(v.abort)
		if !ok {
			return
		}
		v.handle(ev)
	}
}

// retire stops the version taking events; it reports false if v was retired already. With
// drain the worker first handles every event already queued (each bounded by the handler
// timeout); without, it takes no further event and the call running finishes (the engine
// interrupts it if it outlives the handler timeout). Called by the loader only.
func (v *version) retire(drain bool) bool {
	first := false
	v.retireOnce.Do(func() {
		first = true
		v.endRetired()
	})
	if !first {
		return false
	}
	v.unsubscribe()
	if v.reconciler != nil {
		v.reconciler.Shutdown()
	}
	if drain {
		v.intake.Close() // the indexer, if any, closes the worker's queue once drained
		return true
	}
	v.halt()
	return true
}

// drop stops v at once: every runtime is interrupted, the queued events and reconcile keys
// are skipped. It returns how many were. v must be retired (without drain) first.
func (v *version) drop() (events, keys int) {
	v.halt()
	events = v.queue.Len()
	if v.intake != v.queue {
		events += v.intake.Len()
	}
	if v.reconciler != nil {
		keys = v.reconciler.Drop()
	}
	v.stop()
	return events, keys
}

// idle waits up to limit for v's goroutines to finish on their own: the worker and indexer
// done with their queues, the reconcile workers with their keys. It reports whether they did.
func (v *version) idle(limit time.Duration) bool {
	if !v.workerStarted.Load() {
		return true
	}
	finished := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait() // returns once close has stopped whatever was still running
	wg.Go(func() {
		<-v.done
		if v.reconciler != nil {
			v.reconciler.Wait()
		}
		close(finished)
	})
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-finished:
		return true
	case <-timer.C:
		v.stop() // the waiting goroutine above ends once the interrupted calls return
		return false
	}
}

// halt makes the worker and indexer take no further event (pop returns on abort, whatever is
// queued); idempotent.
func (v *version) halt() {
	v.haltOnce.Do(func() { close(v.abort) })
	v.intake.Close()
	v.queue.Close()
}

// stop halts the version and interrupts its runtimes; idempotent, safe from any goroutine.
func (v *version) stop() {
	v.halt()
	v.script.Interrupt()
	for _, ix := range v.indexer.Runtimes() {
		ix.Interrupt()
	}
	if v.reconciler != nil {
		v.reconciler.Interrupt()
	}
}

// close releases everything v holds, from any state: it stops v (interrupting whatever still
// runs), joins every goroutine v started (worker, indexer, scheduler, reconcile workers, the
// wait for its sync) and closes every runtime it was built with, whether its goroutine ever
// started or not. v must be unsubscribed already (retire, or a failed subscribe). Idempotent;
// it blocks for at most the runtimes' grace, so the loader leaves it to a retiring goroutine.
func (v *version) close() {
	v.closeOnce.Do(func() {
		v.stop()
		v.running.Wait()
		v.helpers.Wait()
		if v.reconciler != nil {
			v.reconciler.Close()
		}
		v.script.Close() // idempotent: the worker, if it ran, closed it already
		for _, ix := range v.indexer.Runtimes() {
			ix.Close()
		}
		if v.gcLift != nil {
			v.gcLift()
		}
	})
}
