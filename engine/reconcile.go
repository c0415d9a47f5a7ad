package engine

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"

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
	allowed    func() bool       // false while the runner does not lead: keys are dropped, not run
	sink       scripting.Metrics // ctx.metrics; nil without families
	wg         sync.WaitGroup

	mu       sync.Mutex  // orders start against shutdown
	stopping bool        // shut down: a later start starts nothing
	dropping atomic.Bool // stopped without draining: workers skip the keys left
}

func newReconciler(name string, q workqueue.TypedRateLimitingInterface[string], scripts []*scripting.Script,
	maxRetries int, cache *scriptcache.View, logger *slog.Logger, stats *stats) *reconciler {
	return &reconciler{name: name, queue: q, scripts: scripts, maxRetries: maxRetries,
		cache: cache, logger: logger, metrics: stats.handler(name, "reconcile"), allowed: func() bool { return true }}
}

// start runs the workers, unless the reconciler was shut down first: a version retired before
// its turn to reconcile came never reconciles.
func (r *reconciler) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return
	}
	for _, s := range r.scripts {
		r.wg.Go(func() { r.work(s) })
	}
}

func (r *reconciler) enqueue(key string) { r.queue.Add(key) }

func (r *reconciler) work(s *scripting.Script) {
	defer s.Close()
	for {
		key, quit := r.queue.Get()
		if quit {
			return
		}
		if !r.dropping.Load() {
			r.process(s, key)
		}
		r.queue.Done(key)
	}
}

func (r *reconciler) process(s *scripting.Script, key string) {
	if !r.allowed() {
		return // a new leader replays every key
	}
	ev := scripting.Event{Resource: r.cache.Resource, Cache: r.cache, Enqueue: r.enqueue, Metrics: r.sink}
	start := time.Now()
	res, err := s.Reconcile(key, ev)
	r.metrics.observe(time.Since(start), err)
	if err != nil {
		r.retry(key, err)
		return
	}
	r.queue.Forget(key)
	if res.RequeueAfter > 0 {
		r.queue.AddAfter(key, res.RequeueAfter)
	}
}

func (r *reconciler) retry(key string, err error) {
	attempt := r.queue.NumRequeues(key) + 1
	attrs := []any{"handler", "reconcile", "object", key, "attempt", attempt, "error", err.Error()}
	var se *scripting.ScriptError
	if errors.As(err, &se) && se.Stack != "" {
		attrs = append(attrs, "stack", se.Stack)
	}
	if attempt > r.maxRetries {
		r.logger.Error("reconcile failed; giving up on key", attrs...)
		r.queue.Forget(key)
		return
	}
	r.logger.Warn("reconcile failed; will retry", attrs...)
	r.queue.AddRateLimited(key)
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
