package offline

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// queue is a reconcile workqueue on the virtual clock, with client-go's workqueue semantics:
// a key is queued once however often it is added (dirty), a key being reconciled is not handed
// to another worker, and one added meanwhile is queued again when its worker is done; after
// ShutDown workers finish the keys already queued. Backoff delays come from client-go's default
// controller rate limiter. Delayed keys wait for the harness to move the clock (fire), never
// for time to pass on a goroutine the harness cannot see.
//
// It is written here rather than wrapped around client-go's queue because the harness must know
// exactly when no key is queued or being reconciled (quiet), and client-go's queue tells that
// only through the order in which it calls its metrics.
type queue struct {
	limiter workqueue.TypedRateLimiter[string]
	clock   clock.PassiveClock

	mu         sync.Mutex
	cond       *sync.Cond
	order      []string            // queued keys, first out first
	dirty      map[string]struct{} // queued, or added again while being reconciled
	processing map[string]struct{}
	delayed    map[string]time.Time // the earliest due time per key
	shutdown   bool
	getters    int // workers blocked in Get
	most       int // the most keys ever processed at once: at least that many workers run
}

var _ workqueue.TypedRateLimitingInterface[string] = (*queue)(nil)

func newQueue(clk clock.PassiveClock) *queue {
	q := &queue{limiter: workqueue.DefaultTypedControllerRateLimiter[string](), clock: clk,
		dirty: map[string]struct{}{}, processing: map[string]struct{}{}, delayed: map[string]time.Time{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) Add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.add(key)
}

// add queues key; called with mu held.
func (q *queue) add(key string) {
	if q.shutdown {
		return
	}
	if _, ok := q.dirty[key]; ok {
		return
	}
	q.dirty[key] = struct{}{}
	if _, ok := q.processing[key]; ok {
		return // queued again by Done
	}
	q.order = append(q.order, key)
	q.cond.Signal()
}

func (q *queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// Get blocks until a key is queued, or returns quit once shut down and empty.
func (q *queue) Get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.order) == 0 && !q.shutdown {
		q.getters++
		q.cond.Wait()
		q.getters--
	}
	if len(q.order) == 0 {
		return "", true
	}
	key := q.order[0]
	q.order[0] = ""
	q.order = q.order[1:]
	q.processing[key] = struct{}{}
	q.most = max(q.most, len(q.processing))
	delete(q.dirty, key)
	return key, false
}

func (q *queue) Done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, key)
	if _, ok := q.dirty[key]; ok {
		q.order = append(q.order, key)
		q.cond.Signal()
	}
}

func (q *queue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	q.cond.Broadcast()
}

// ShutDownWithDrain is ShutDown: the reconciler waits for its workers itself.
func (q *queue) ShutDownWithDrain() { q.ShutDown() }

func (q *queue) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shutdown
}

func (q *queue) AddAfter(key string, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	if d <= 0 {
		q.add(key)
		return
	}
	due := q.clock.Now().Add(d)
	if t, ok := q.delayed[key]; !ok || due.Before(t) {
		q.delayed[key] = due
	}
}

func (q *queue) AddRateLimited(key string) { q.AddAfter(key, q.limiter.When(key)) }
func (q *queue) Forget(key string)         { q.limiter.Forget(key) }
func (q *queue) NumRequeues(key string) int {
	return q.limiter.NumRequeues(key)
}

// fire queues the delayed keys due at now.
func (q *queue) fire(now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, t := range q.delayed {
		if !t.After(now) {
			delete(q.delayed, k)
			q.add(k)
		}
	}
}

// next is the earliest due time of a delayed key.
func (q *queue) next() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var first time.Time
	for _, t := range q.delayed {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first, !first.IsZero()
}

// quiet reports that no key is queued or being reconciled (or the queue is shut down: its
// workers are the retiring version's, which the harness does not wait for).
func (q *queue) quiet() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shutdown || (len(q.order) == 0 && len(q.processing) == 0)
}

// workers reports the keys being reconciled (each a worker in a call, or about to make one or
// just out of one) and whether a queued key is about to be taken: a worker waits in Get, or
// fewer keys are processed than ever before at once (a worker between Done and its next Get).
// A shut-down queue reports nothing, as quiet does.
func (q *queue) workers() (busy int, pending bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return 0, false
	}
	n := len(q.processing)
	return n, len(q.order) > 0 && (q.getters > 0 || n == 0 || n < q.most)
}
