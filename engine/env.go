package engine

import (
	"log/slog"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/store"
)

// Env is the engine's environment, as small interfaces the engine owns: where objects come
// from (Informers, Resolver), the clock, and the writer behind scripts' `k8s` global (whose
// k8s.event is the Event sink). New builds the real one on a cluster (package k8sclient for the
// writer); package offline builds another on an in-memory cluster and a virtual clock. The
// engine does not know which it runs on.
type Env struct {
	Informers Informers
	Resolver  Resolver
	Clock     Clock
	// Client returns the `k8s` global of one script version, logging with logger.
	Client func(logger *slog.Logger) scripting.Client
	// OnParked, when set, is every runtime's scripting.Options.OnParked: a driver on a
	// virtual clock counts the calls that wait only on requests held for that clock.
	OnParked func(delta int)
	// Store, when set, backs ctx.store in a driven engine (Config.Store is for New's); its
	// owner closes it after the engine. Nil: ctx.store throws.
	Store *store.Store
}

// Informers hands out shared informers by key and reports on them.
type Informers interface {
	Acquire(key dynamicinformer.Key) (InformerHandle, error)
	Health() []dynamicinformer.Health
	Active() map[dynamicinformer.Key]int
	Shutdown()
}

// InformerHandle is one user's reference on a shared informer.
type InformerHandle interface {
	Informer() cache.SharedIndexInformer
	Release()
}

// Resolver maps resource names as users write them to resources.
type Resolver interface {
	Resolve(name string) (dynamicinformer.Resource, error)
}

// Clock is the engine's time: scripts' Date, schedules and reconcile delays follow it.
type Clock interface {
	Now() time.Time
	// NewTimer is a timer on this clock, for schedules.
	NewTimer(d time.Duration) clock.Timer
	// NewQueue is a reconcile workqueue whose delays (requeueAfter, backoff) run on this clock.
	NewQueue(name string) workqueue.TypedRateLimitingInterface[string]
	// AfterFunc calls f on its own goroutine d after now, for fetch's timeouts.
	AfterFunc(d time.Duration, f func()) clock.Timer
}

// FactoryInformers adapts dynamicinformer's Factory to Informers.
func FactoryInformers(f *dynamicinformer.Factory) Informers { return factoryInformers{f} }

type factoryInformers struct{ *dynamicinformer.Factory }

func (f factoryInformers) Acquire(key dynamicinformer.Key) (InformerHandle, error) {
	return f.Factory.Acquire(key)
}

// realClock is the wall clock, with client-go's rate-limited workqueue and its default
// controller rate limiter.
type realClock struct{ clock.RealClock }

func (realClock) NewQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}
