package engine

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/scripting"
)

// subscription is one watched resource of a version: its informer handle and registration.
type subscription struct {
	key      dynamicinformer.Key
	target   target
	informer informerHandle
	reg      cache.ResourceEventHandlerRegistration
	cache    *cacheView
}

// version is one loaded content of one script file. Its worker goroutine owns the Script
// (one goja runtime) and is the only writer of its store; client-go listeners only enqueue.
//
// A script with index functions gets a second stage ahead of the worker (index.go): it takes
// events from intake, computes their index values on a runtime of its own and passes them on
// to queue, in order, so the worker still applies values to the store in event order.
type version struct {
	name, hash string
	src        plugins.Source // to load again on becoming leader
	standby    bool           // built while not leading: calls nothing, ever
	lead       *leadership    // nil without leader election
	book       *statusBook    // the state API's record; nil in unit tests
	started    time.Time      // when building it began, for the load duration
	allocMark  uint64         // the collector's mark when building began
	script     *scripting.Script
	indexer    *scripting.Script // the index stage's runtime; nil without index functions
	def        scripting.Definition
	logger     *slog.Logger
	store      *store
	subs       []*subscription // the loader's: the worker reads scheduleCache instead
	// scheduleCache is the first watched resource's cache, ctx.cache of schedules; written by
	// subscribe before the loader starts the schedules, never cleared.
	scheduleCache *cacheView
	intake        *queue[event]                      // client-go listeners push here; the same queue without indexer
	queue         *queue[event]                      // the worker pops here
	metrics       [len(handlerNames)]*handlerMetrics // by event kind; nil for a handler not defined

	indexFailed map[objectKey]bool // objects whose index function threw; logged once each
	reconciler  *reconciler        // nil unless the script exports reconcile
	enqueue     func(string)       // ctx.enqueue: reconciler.enqueue, nil without reconcile

	abort           chan struct{} // closed to stop the goroutines without draining
	haltOnce        sync.Once
	retireOnce      sync.Once
	synced          chan struct{}   // closed when the worker has handled every initial-list add
	done            chan struct{}   // closed when the worker and indexer have returned
	finished        chan struct{}   // closed when retired and joined, after its predecessor's
	state           atomic.Int32    // a versionState
	retired         chan struct{}   // closed when retired, in either mode: stops the scheduler
	scheduled       []atomic.Bool   // by schedule entry: a run is queued and not yet started
	ownerNamespaced bool            // the reconciled resource is namespaced (owner keys are ns/name)
	after           <-chan struct{} // the finished of the version it replaced (not the version: its memory must go)
	running         sync.WaitGroup  // worker and indexer
	insp            *versionInspect // trace, pauses, the call in flight (tracecall.go)
}

// subscribe acquires an informer per key and registers the version's handler on it. On
// error everything acquired so far is given back.
func (v *version) subscribe(factory informerSource, targets []target, resolve func(string) (string, error)) error {
	for _, t := range targets {
		inf, err := factory.Acquire(t.key)
		if err != nil {
			v.unsubscribe()
			return fmt.Errorf("watch %s: %w", t.key, err)
		}
		sub := &subscription{key: t.key, target: t, informer: inf}
		sub.cache = &cacheView{store: v.store, resource: t.resource.String(), resolve: resolve}
		v.store.reserve(sub.cache.resource, len(inf.Informer().GetStore().ListKeys()))
		v.subs = append(v.subs, sub)
		if v.scheduleCache == nil {
			v.scheduleCache = sub.cache
		}
		if sub.reg, err = inf.Informer().AddEventHandler(handlerFor(sub, v.intake)); err != nil {
			v.unsubscribe()
			return fmt.Errorf("register handler on %s: %w", t.key, err)
		}
	}
	return nil
}

// unsubscribe removes the registrations, waiting until client-go delivers nothing more, and
// releases the informers. Afterwards the queue holds every event the version will ever get.
func (v *version) unsubscribe() {
	for _, sub := range v.subs {
		if sub.reg != nil {
			if err := cache.ShutDownEventHandler(sub.informer.Informer(), sub.reg); err != nil {
				v.logger.Warn("remove event handler", "error", err)
			}
		}
		sub.informer.Release()
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
			case <-sub.reg.HasSyncedChecker().Done():
				done = true
			case <-warn.C:
				v.logger.Warn("still waiting for the informer to sync", "informer", sub.key.String())
			case <-v.abort:
				return false
			}
		}
	}
	v.intake.push(event{kind: eventSynced})
	select {
	case <-v.synced:
		return true
	case <-v.abort:
		return false
	}
}

// start runs the worker, and the indexer when the script has index functions.
func (v *version) start() {
	v.running.Go(v.work)
	if v.indexer != nil {
		v.running.Go(v.index)
	}
	go func() {
		v.running.Wait()
		close(v.done)
	}()
}

// work handles queued events in order until the queue is closed and drained, or abort.
func (v *version) work() {
	defer v.script.Close()
	for {
		ev, ok := v.queue.pop(v.abort)
		if !ok {
			return
		}
		v.handle(ev)
	}
}

// retire stops the version. With drain the worker first handles every event already queued
// (each bounded by the handler timeout); without, it takes no further event and the call
// running finishes (the engine interrupts it if it outlives the handler timeout).
func (v *version) retire(drain bool) {
	v.retireOnce.Do(func() { close(v.retired) })
	v.unsubscribe()
	if v.reconciler != nil {
		v.reconciler.shutdown()
	}
	if drain {
		v.intake.close() // the indexer, if any, closes the worker's queue once drained
		return
	}
	v.halt()
}

// halt makes the worker and indexer take no further event; idempotent.
func (v *version) halt() {
	v.haltOnce.Do(func() { close(v.abort) })
	v.intake.close()
	v.queue.close()
}

// stop halts the version and interrupts its runtimes; idempotent.
func (v *version) stop() {
	v.halt()
	v.script.Interrupt()
	if v.indexer != nil {
		v.indexer.Interrupt()
	}
	if v.reconciler != nil {
		v.reconciler.interrupt()
	}
}
