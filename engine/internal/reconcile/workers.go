package reconcile

import (
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

// Runtime is one worker's script (a *scripting.Script): Reconcile is called by that worker
// only, never twice at once; Interrupt from any goroutine; Close once nothing calls it.
type Runtime interface {
	Reconcile(key string, ev scripting.Event) (scripting.ReconcileResult, error)
	Interrupt()
	Close()
}

// Observer counts each run: how long it took and its error (the handler's series).
type Observer interface {
	Observe(took time.Duration, err error)
}

// Config is what Workers run on. Queue, Runtimes, Cache, Logger and Metrics are required.
type Config[R Runtime] struct {
	Name    string // the script, for logs, traces and pauses
	Version string // its content hash, for traces
	// Queue is the rate-limited workqueue (its delays on the engine's clock); the Workers own it.
	Queue workqueue.TypedRateLimitingInterface[string]
	// Runtimes are the workers' scripts, one worker each; the Workers own them from New on.
	Runtimes []R
	// Recorders are the recording side of each worker, by runtime; a nil entry, or none,
	// records nothing.
	Recorders  []*trace.Worker
	MaxRetries int
	Cache      *scriptcache.View // ctx.cache, ctx.resource: the reconciled resource's
	Logger     *slog.Logger
	Metrics    Observer
	Sink       scripting.Metrics // ctx.metrics; nil without families
	// Begin starts a run of key; false while the runner does not lead, or another replica
	// owns key: the key is dropped, not run (a new leader or owner replays it). Nil: always.
	Begin func(key string) (end func(), ok bool)
	// Handles filters enqueued keys: another replica's keys are not queued here. Nil: all.
	Handles func(key string) bool
	// Hold blocks while the script is paused (inspect.Pauses); false gives up the key (the
	// version stops). Nil: never holds.
	Hold func() bool
}

// Workers feed a script's reconcile(key, ctx) from a client-go rate-limited workqueue: keys
// are deduplicated, one key is never reconciled by two workers at once, failures retry with
// exponential backoff up to MaxRetries. Each worker owns its own runtime, so module-level JS
// state is not shared between reconcile workers and the event handlers.
//
// The Workers own their runtimes from the moment they are made, whether the workers ever
// start or not: Close releases them on every path (a version retired before its turn to
// reconcile came never starts them, and its runtimes must still go).
type Workers[R Runtime] struct {
	cfg  Config[R]
	book *inspect.KeyBook
	wg   sync.WaitGroup

	mu       sync.Mutex  // orders Start against Shutdown
	stopping bool        // shut down: a later Start starts nothing
	dropping atomic.Bool // stopped without draining: workers skip the keys left
}

// New returns the Workers of cfg, not started.
func New[R Runtime](cfg Config[R]) *Workers[R] {
	if cfg.Begin == nil {
		cfg.Begin = func(string) (func(), bool) { return func() {}, true }
	}
	if cfg.Handles == nil {
		cfg.Handles = func(string) bool { return true }
	}
	if cfg.Hold == nil {
		cfg.Hold = func() bool { return true }
	}
	if len(cfg.Recorders) < len(cfg.Runtimes) {
		cfg.Recorders = append(cfg.Recorders, make([]*trace.Worker, len(cfg.Runtimes)-len(cfg.Recorders))...)
	}
	return &Workers[R]{cfg: cfg, book: inspect.NewKeyBook()}
}

// Start runs the workers, unless the Workers were shut down first: a version retired before
// its turn to reconcile came never reconciles.
func (r *Workers[R]) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return
	}
	for i, s := range r.cfg.Runtimes {
		r.wg.Go(func() { r.work(s, r.cfg.Recorders[i]) })
	}
}

// Enqueue queues key for a reason the queue view shows (inspect.KeyBook), unless another
// replica handles it.
func (r *Workers[R]) Enqueue(key, reason string) {
	if !r.cfg.Handles(key) {
		return
	}
	r.book.Queued(key, reason)
	r.cfg.Queue.Add(key)
}

// Requeue forgets key's backoff and queues it now.
func (r *Workers[R]) Requeue(key, reason string) {
	r.cfg.Queue.Forget(key)
	r.Enqueue(key, reason)
}

// Book is the keys' book, for the queue view.
func (r *Workers[R]) Book() *inspect.KeyBook { return r.book }

// Resource is the reconciled resource.
func (r *Workers[R]) Resource() string { return r.cfg.Cache.Resource }

// Runtimes are the workers' runtimes (the memory guard measures them); the Workers own them.
func (r *Workers[R]) Runtimes() []R { return r.cfg.Runtimes }

// Len is how many keys are queued and not running.
func (r *Workers[R]) Len() int { return r.cfg.Queue.Len() }

// Shutdown stops taking keys; the workers finish the keys already queued and return. It does
// not wait: a retiring version must not hold up the loader.
func (r *Workers[R]) Shutdown() {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.cfg.Queue.ShutDown()
}

// Drop stops the running reconciles at once and skips the keys left, which it returns.
func (r *Workers[R]) Drop() int {
	r.dropping.Store(true)
	left := r.cfg.Queue.Len()
	r.Interrupt()
	return left
}

// Interrupt shuts down, stops the running reconciles and makes the remaining ones fail fast.
func (r *Workers[R]) Interrupt() {
	r.Shutdown()
	for _, s := range r.cfg.Runtimes {
		s.Interrupt()
	}
}

// Wait blocks until every worker has returned.
func (r *Workers[R]) Wait() { r.wg.Wait() }

// Close stops the Workers, interrupting the running reconciles, joins the workers and closes
// every runtime they were made with, started or not. Idempotent, if the runtimes' Close is.
func (r *Workers[R]) Close() {
	r.Interrupt()
	r.wg.Wait() // after Shutdown no worker can start, so nothing races this wait
	for _, s := range r.cfg.Runtimes {
		s.Close() // the workers that ran have returned: this goroutine owns every runtime now
	}
}
