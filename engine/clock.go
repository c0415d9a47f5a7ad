package engine

import (
	"time"

	"k8s.io/client-go/util/workqueue"
)

// The engine's time: the real clock, except in an Offline engine (offline.go), whose
// virtual clock scripts' Date and reconcile delays (requeueAfter, retry backoff) follow.

// timeSource is the clock scripts' Date reads; nil for the real one.
func (e *Engine) timeSource() func() time.Time {
	if e.offline == nil {
		return nil
	}
	return e.offline.clock.Now
}

// reconcileQueue is the workqueue of a version's reconcile: client-go's rate-limited queue
// with its default controller rate limiter, on the engine's clock.
func (e *Engine) reconcileQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	if e.offline != nil {
		return e.offline.newQueue(name)
	}
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}
