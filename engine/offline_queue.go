package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// virtualQueue is a reconcile workqueue on the Offline engine's virtual clock: client-go's
// queue (deduplication, one worker per key, Done) and its default controller rate limiter
// (the backoff delays), with delays that wait for the clock to be moved rather than for time
// to pass. Delayed keys are kept as client-go's delaying queue keeps them (the earliest due
// time per key) and are added by fire, called by the harness after it moves the clock, so a
// delay ends exactly when the harness says and never on a goroutine it cannot see.
type virtualQueue struct {
	workqueue.TypedInterface[string]
	limiter workqueue.TypedRateLimiter[string]
	clock   clock.PassiveClock
	work    *workCounter

	mu      sync.Mutex
	delayed map[string]time.Time
}

var _ workqueue.TypedRateLimitingInterface[string] = (*virtualQueue)(nil)

func newVirtualQueue(name string, clk clock.WithTicker) *virtualQueue {
	work := &workCounter{}
	base := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, Clock: clk, MetricsProvider: work})
	return &virtualQueue{TypedInterface: base, limiter: workqueue.DefaultTypedControllerRateLimiter[string](),
		clock: clk, work: work, delayed: map[string]time.Time{}}
}

func (q *virtualQueue) AddAfter(key string, d time.Duration) {
	if q.ShuttingDown() {
		return
	}
	if d <= 0 {
		q.Add(key)
		return
	}
	due := q.clock.Now().Add(d)
	q.mu.Lock()
	defer q.mu.Unlock()
	if t, ok := q.delayed[key]; !ok || due.Before(t) {
		q.delayed[key] = due
	}
}

func (q *virtualQueue) AddRateLimited(key string) { q.AddAfter(key, q.limiter.When(key)) }
func (q *virtualQueue) Forget(key string)         { q.limiter.Forget(key) }
func (q *virtualQueue) NumRequeues(key string) int {
	return q.limiter.NumRequeues(key)
}

// fire adds the delayed keys that are due at now.
func (q *virtualQueue) fire(now time.Time) {
	q.mu.Lock()
	var due []string
	for k, t := range q.delayed {
		if !t.After(now) {
			due = append(due, k)
			delete(q.delayed, k)
		}
	}
	q.mu.Unlock()
	for _, k := range due {
		q.Add(k)
	}
}

// next is the earliest due time of a delayed key.
func (q *virtualQueue) next() (time.Time, bool) {
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

// quiet reports that no key is queued or being reconciled. It reads the started and finished
// counts on each side of the length, all of which client-go updates under its queue's lock,
// so a key taken in between cannot go unseen.
func (q *virtualQueue) quiet() bool {
	started := q.work.started.Load()
	finished := q.work.finished.Load()
	empty := q.Len() == 0
	return empty && started == finished && q.work.started.Load() == started
}

// workCounter is a workqueue.MetricsProvider that counts the keys workers take (Get) and
// finish (Done); client-go calls it under the queue's lock. Every other metric is dropped.
type workCounter struct {
	started, finished atomic.Int64
}

type counted struct{ n *atomic.Int64 }

func (c counted) Observe(float64) { c.n.Add(1) }

type noMetric struct{}

func (noMetric) Inc()            {}
func (noMetric) Dec()            {}
func (noMetric) Set(float64)     {}
func (noMetric) Observe(float64) {}

func (w *workCounter) NewDepthMetric(string) workqueue.GaugeMetric     { return noMetric{} }
func (w *workCounter) NewAddsMetric(string) workqueue.CounterMetric    { return noMetric{} }
func (w *workCounter) NewRetriesMetric(string) workqueue.CounterMetric { return noMetric{} }
func (w *workCounter) NewLatencyMetric(string) workqueue.HistogramMetric {
	return counted{&w.started} // observed once per Get
}
func (w *workCounter) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return counted{&w.finished} // observed once per Done of a key that was got
}
func (w *workCounter) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (w *workCounter) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
