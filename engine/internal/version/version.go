package version

import (
	"context"
	"fmt"
	"github.com/jsinformer/jsinformer/shardrange"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/leader"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
	"github.com/jsinformer/jsinformer/engine/internal/schedule"
	"github.com/jsinformer/jsinformer/engine/internal/shardgate"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// Version is one loaded content of one script file. Its worker goroutine owns the Script
// (one goja runtime) and is the only writer of its store; client-go listeners only enqueue.
//
// A script with index functions gets a second stage ahead of the worker (IndexStage): it
// takes events from intake, computes their index values on runtimes of its own and passes
// them on to queue, in order, so the worker still applies values to the store in event order.
type Version struct {
	name, hash string
	standby    bool            // built while not leading: calls nothing, ever
	lead       *leader.Elector // nil without leader election
	shard      *shardgate.Gate // nil without sharding: every key is this runner's
	book       *status.Book    // the state API's record; nil in unit tests
	started    time.Time       // when building it began, for the load duration
	onClose    func()          // Config.OnClose; idempotent
	clock      Clock           // schedules' time
	script     *scripting.Script
	indexer    *IndexStage // nil without index functions
	def        scripting.Definition
	logger     *slog.Logger
	store      *scriptcache.Store
	targets    []Target
	unwatched  bool // Config.Unwatched
	acquire    func(dynamicinformer.Key) (Informer, error)
	resolve    func(string) (string, error)
	subs       []*Subscription         // the loader's: the worker reads scheduleCache instead
	fans       *fanout.Registry[Event] // the engine's, which subs are subscribed through
	// scheduleCache is the first watched resource's cache, ctx.cache of schedules; written by
	// Subscribe before the loader starts the schedules, never cleared.
	scheduleCache *scriptcache.View
	intake        *queue.Queue[Event]                       // client-go listeners push here; the same queue without indexer
	queue         *queue.Queue[Event]                       // the worker pops here
	metrics       [len(handlerNames)]*enginemetrics.Handler // by event kind; nil for a handler not defined
	scriptMetrics *enginemetrics.Version                    // the definition's metric families; nil without

	reconciler  *reconcileWorkers // nil unless the script exports reconcile
	admit       *admitPool        // validate's and mutate's runtimes; nil without (admit.go)
	enqueue     func(string)      // ctx.enqueue: reconciler.Enqueue, nil without reconcile
	enqueueOnly func(string) bool // the worker's, while replaying gained keys: which keys to enqueue

	abort           chan struct{} // closed to stop the goroutines without draining
	haltOnce        sync.Once
	retireOnce      sync.Once
	closeOnce       sync.Once
	workerStarted   atomic.Bool     // Start ran: the worker (and indexer) goroutines exist
	synced          chan struct{}   // closed when the worker has handled every initial-list add
	done            chan struct{}   // closed when the worker and indexer have returned
	state           atomic.Int32    // a State
	retired         context.Context // done when retired, in either mode: stops the scheduler
	endRetired      context.CancelFunc
	schedules       *schedule.Loop       // nil without schedules or before v serves; set before the first EventSchedule
	outboxCfg       *OutboxConfig        // Config.Outbox: nil without an outbox
	outbox          *outboxLoop          // nil without an outbox or before v serves; set before the first EventDeliver
	ownerNamespaced bool                 // the reconciled resource is namespaced (owner keys are ns/name)
	partition       shardrange.Partition // of every watch (--shard-cache); zero: caches are whole
	running         sync.WaitGroup       // worker, indexer and scheduler
	helpers         sync.WaitGroup       // the goroutines waiting on others: for running (done), for the sync
	insp            *Inspect             // trace, pauses, the call in flight, subscriptions (trace.go)
}

// Script is v's script name (inspect.Live).
func (v *Version) Script() string { return v.name }

// Hash is v's content hash (inspect.Live).
func (v *Version) Hash() string { return v.hash }

// Started is when building v began.
func (v *Version) Started() time.Time { return v.started }

// Logger logs with v's script and content.
func (v *Version) Logger() *slog.Logger { return v.logger }

// Definition is what v's script exports.
func (v *Version) Definition() scripting.Definition { return v.def }

// ScriptMetrics are the metric families v's definition declares; nil without.
func (v *Version) ScriptMetrics() *enginemetrics.Version { return v.scriptMetrics }

// Reconciles reports whether v has reconcile workers: the script reconciles and v is not a
// standby's.
func (v *Version) Reconciles() bool { return v.reconciler != nil }

// ReconcileQueued is how many keys wait in v's reconcile queue; 0 without reconcile workers.
func (v *Version) ReconcileQueued() int {
	if v.reconciler == nil {
		return 0
	}
	return v.reconciler.Len()
}

// Subscribe acquires an informer per target and registers v's handler on it, then publishes
// the subscriptions (Subscriptions); none when v is unwatched (Config.Unwatched), which then
// syncs at once. On error everything acquired so far is given back. Called by the loader
// once, after Start.
func (v *Version) Subscribe() error {
	for _, t := range v.Informed() {
		inf, err := v.acquire(t.Key)
		if err != nil {
			v.unsubscribe()
			return fmt.Errorf("watch %s: %w", t.Key, err)
		}
		sub := &Subscription{Key: t.Key, Target: t, Handle: inf, Queue: v.intake}
		sub.Cache = &scriptcache.View{Store: v.store, Resource: t.Resource.String(), Resolve: v.resolve, Partition: cachePartition(t.Key.Partition)}
		v.store.Reserve(sub.Cache.Resource, len(inf.Informer().GetStore().ListKeys()))
		v.subs = append(v.subs, sub)
		if v.scheduleCache == nil {
			v.scheduleCache = sub.Cache
		}
		if sub.Fan, err = v.fans.Subscribe(sub); err != nil {
			v.unsubscribe()
			return fmt.Errorf("register handler on %s: %w", t.Key, err)
		}
		sub.Synced = sub.Fan.Synced()
	}
	v.insp.SetSubscriptions(v.subs)
	return nil
}

// Informed are the targets v acquires informers of: none when unwatched (Config.Unwatched).
func (v *Version) Informed() []Target {
	if v.unwatched {
		return nil
	}
	return v.targets
}

// unsubscribe takes the subscriptions off their fanouts (the last one off an informer removes
// its registration, waiting until client-go delivers nothing more) and releases the
// informers. Afterwards the queue holds every event the version will ever get.
func (v *Version) unsubscribe() {
	for _, sub := range v.subs {
		if err := v.fans.Unsubscribe(sub.Fan); err != nil {
			v.logger.Warn("remove event handler", "error", err)
		}
		sub.Handle.Release()
	}
	v.subs = nil
}

// OnSynced runs synced, on a goroutine of v's (joined by Close), once every subscription has
// delivered its initial list and the worker has handled it; never if v halts first. synced
// gets v's abort, closed when v halts, to give up waiting on. Called by the loader after
// Subscribe.
func (v *Version) OnSynced(warnAfter time.Duration, synced func(abort <-chan struct{})) {
	v.helpers.Go(func() {
		if v.WaitSynced(warnAfter) {
			synced(v.abort)
		}
	})
}

// WaitSynced blocks until every subscription has delivered its initial list and the worker
// has handled it, or until v halts; it reports whether v synced. It reads the published
// subscriptions, so it may run on any goroutine while the loader retires v.
func (v *Version) WaitSynced(warnAfter time.Duration) bool {
	warn := time.NewTimer(warnAfter)
	defer warn.Stop()
	for _, sub := range v.Subscriptions() {
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
	v.intake.Push(Event{Kind: EventSynced})
	select {
	case <-v.synced:
		return true
	case <-v.abort:
		return false
	}
}

// Start runs the worker, and the index stage when the script has index functions. The
// worker starts before Subscribe so it handles the initial adds while client-go is still
// delivering them. Called by the loader once.
func (v *Version) Start() {
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
func (v *Version) work() {
	defer v.script.Close()
	for {
		ev, ok := v.queue.Pop(v.abort)
		if !ok {
			return
		}
		v.handle(ev)
	}
}

// QueuesIdle reports that v's worker and index stage have handled every event queued and
// wait for the next.
func (v *Version) QueuesIdle() bool { return v.intake.Idle() && v.queue.Idle() }

// WorkerState reports whether the worker is busy (not waiting on its empty queue) and whether
// work is pending that a waiting consumer is about to take: events in the intake (the index
// stage runs no fetch, so it is never parked) or queued for a worker that waits.
func (v *Version) WorkerState() (busy, pending bool) {
	indexing := v.intake != v.queue && !v.intake.Idle() // first: events flow from intake to queue
	n, waiting := v.queue.State()
	return !waiting, indexing || (waiting && n > 0)
}
