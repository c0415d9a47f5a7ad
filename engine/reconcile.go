package engine

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
)

// reconciler feeds a script's reconcile(key, ctx) from a client-go rate-limited workqueue:
// keys are deduplicated, one key is never reconciled by two workers at once, failures retry
// with exponential backoff up to maxRetries. Each worker owns its own runtime, so module-level
// JS state is not shared between reconcile workers and the event handlers.
//
// The reconciler owns its runtimes from the moment it is made, whether its workers ever start
// or not: close releases them on every path (a version retired before its turn to reconcile
// came never starts them, and its runtimes must still go).
type reconciler struct {
	name       string
	queue      workqueue.TypedRateLimitingInterface[string]
	scripts    []*scripting.Script
	maxRetries int
	cache      *scriptcache.View
	logger     *slog.Logger
	metrics    *handlerMetrics
	// begin starts a run of key; false while the runner does not lead, or another replica owns
	// key: the key is dropped, not run (a new leader or owner replays it).
	begin func(key string) (end func(), ok bool)
	// handles filters enqueued keys: another replica's keys are not queued here.
	handles func(key string) bool
	sink    scripting.Metrics // ctx.metrics; nil without families
	insp    reconcileInspect
	wg      sync.WaitGroup

	mu       sync.Mutex  // orders start against shutdown
	stopping bool        // shut down: a later start starts nothing
	dropping atomic.Bool // stopped without draining: workers skip the keys left
}

func newReconciler(name string, q workqueue.TypedRateLimitingInterface[string], scripts []*scripting.Script,
	maxRetries int, cache *scriptcache.View, logger *slog.Logger, stats *stats) *reconciler {
	return &reconciler{name: name, queue: q, scripts: scripts, maxRetries: maxRetries,
		cache: cache, logger: logger, metrics: stats.handler(name, "reconcile"),
		begin: func(string) (func(), bool) { return func() {}, true }, handles: func(string) bool { return true },
		insp: reconcileInspect{book: inspect.NewKeyBook(), workers: make([]*trace.Worker, len(scripts))}}
}

// start runs the workers, unless the reconciler was shut down first: a version retired before
// its turn to reconcile came never reconciles.
func (r *reconciler) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return
	}
	for i, s := range r.scripts {
		r.wg.Go(func() { r.work(s, r.insp.workers[i]) })
	}
}

// enqueue queues key for a reason the queue view shows (inspect.KeyBook).
func (r *reconciler) enqueue(key, reason string) {
	if !r.handles(key) {
		return
	}
	r.insp.book.Queued(key, reason)
	r.queue.Add(key)
}

func (r *reconciler) work(s *scripting.Script, w *trace.Worker) {
	defer s.Close()
	for {
		key, quit := r.queue.Get()
		if quit {
			return
		}
		if !r.dropping.Load() {
			r.process(s, w, key)
		}
		r.queue.Done(key)
	}
}

func (r *reconciler) process(s *scripting.Script, w *trace.Worker, key string) {
	end, ok := r.begin(key)
	if !ok {
		return // a new leader or the key's new owner replays it
	}
	defer end()
	if !r.insp.pauses.Wait(r.name, r.insp.halt) {
		return
	}
	enqueue := func(k string) {
		w.Tap().AddEnqueued(k)
		r.enqueue(k, "ctx.enqueue in reconcile of "+key)
	}
	ev := scripting.Event{Resource: r.cache.Resource, Cache: r.cache, Enqueue: enqueue, Metrics: r.sink}
	rec := r.traceStart(w, key)
	r.insp.book.Started(key)
	w.Tap().Open(rec, false)
	start := time.Now()
	res, err := s.Reconcile(key, ev)
	took := time.Since(start)
	w.Tap().Close()
	r.metrics.Observe(took, err)
	attempt, gaveUp := 0, false
	if err != nil {
		attempt, gaveUp = r.retry(key, err)
	} else {
		r.queue.Forget(key)
		if res.RequeueAfter > 0 {
			r.queue.AddAfter(key, res.RequeueAfter)
		}
	}
	r.insp.book.Finished(key, err, attempt, gaveUp, res.RequeueAfter)
	r.traceDone(w, rec, took, err)
}

// retry requeues key with backoff, or gives up after maxRetries; it returns the attempt that
// failed and whether it gave up.
func (r *reconciler) retry(key string, err error) (int, bool) {
	attempt := r.queue.NumRequeues(key) + 1
	attrs := []any{"handler", "reconcile", "object", key, "attempt", attempt, "error", err.Error()}
	var se *scripting.ScriptError
	if errors.As(err, &se) && se.Stack != "" {
		attrs = append(attrs, "stack", se.Stack)
	}
	if attempt > r.maxRetries {
		r.logger.Error("reconcile failed; giving up on key", attrs...)
		r.queue.Forget(key)
		return attempt, true
	}
	r.logger.Warn("reconcile failed; will retry", attrs...)
	r.queue.AddRateLimited(key)
	return attempt, false
}

// shutdown stops taking keys; the workers finish the keys already queued and return. It does
// not wait: a retiring version must not hold up the loader.
func (r *reconciler) shutdown() {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.queue.ShutDown()
}

// drop stops the running reconciles at once and skips the keys left, which it returns.
func (r *reconciler) drop() int {
	r.dropping.Store(true)
	left := r.queue.Len()
	r.interrupt()
	return left
}

// interrupt stops the running reconciles and makes the remaining ones fail fast.
func (r *reconciler) interrupt() {
	r.shutdown()
	for _, s := range r.scripts {
		s.Interrupt()
	}
}

// wait blocks until every worker has returned.
func (r *reconciler) wait() { r.wg.Wait() }

// close stops the reconciler, interrupting the running reconciles, joins its workers and
// closes every runtime it was made with, started or not. Idempotent.
func (r *reconciler) close() {
	r.interrupt()
	r.wg.Wait() // after shutdown no worker can start, so nothing races this wait
	for _, s := range r.scripts {
		s.Close() // the workers that ran have returned: this goroutine owns every runtime now
	}
}
