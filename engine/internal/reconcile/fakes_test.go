package reconcile_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/jsinformer/jsinformer/engine/internal/reconcile"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
	"github.com/jsinformer/jsinformer/scripting"
)

var errInterrupted = errors.New("interrupted")

// fakeRuntime is a Runtime whose reconcile is run; it fails the test when called by two
// goroutines at once or after Close, as a goja runtime would misbehave.
type fakeRuntime struct {
	t         *testing.T
	run       func(key string, ev scripting.Event, interrupted <-chan struct{}) (scripting.ReconcileResult, error)
	interrupt chan struct{}
	once      sync.Once
	inCall    atomic.Bool
	closed    atomic.Bool
	calls     atomic.Int32 // interrupted or not
}

func newFakes(t *testing.T, n int, run func(string, scripting.Event, <-chan struct{}) (scripting.ReconcileResult, error)) []*fakeRuntime {
	out := make([]*fakeRuntime, n)
	for i := range out {
		out[i] = &fakeRuntime{t: t, run: run, interrupt: make(chan struct{})}
	}
	return out
}

func (f *fakeRuntime) Reconcile(key string, ev scripting.Event) (scripting.ReconcileResult, error) {
	f.calls.Add(1)
	if f.closed.Load() {
		f.t.Errorf("reconcile(%q) on a closed runtime", key)
	}
	if !f.inCall.CompareAndSwap(false, true) {
		f.t.Errorf("reconcile(%q) while the runtime is in another call", key)
	}
	defer f.inCall.Store(false)
	select {
	case <-f.interrupt:
		return scripting.ReconcileResult{}, errInterrupted
	default:
	}
	return f.run(key, ev, f.interrupt)
}

func (f *fakeRuntime) Interrupt() { f.once.Do(func() { close(f.interrupt) }) }

func (f *fakeRuntime) Close() {
	f.Interrupt()
	f.closed.Store(true)
}

// limiter is a rate limiter without delay (a retry is queued at once) that counts what the
// workers asked of it.
type limiter struct {
	mu       sync.Mutex
	failures map[string]int // by key, since its last Forget
	retries  map[string]int // by key, in all
	forgets  map[string]int
}

func newLimiter() *limiter {
	return &limiter{failures: map[string]int{}, retries: map[string]int{}, forgets: map[string]int{}}
}

func (l *limiter) When(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures[key]++
	l.retries[key]++
	return 0
}

func (l *limiter) Forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, key)
	l.forgets[key]++
}

func (l *limiter) NumRequeues(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures[key]
}

func (l *limiter) counts(key string) (retries, forgets int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retries[key], l.forgets[key]
}

// observer counts the runs the workers report, by outcome.
type observer struct{ ok, failed atomic.Int32 }

func (o *observer) Observe(_ time.Duration, err error) {
	if err != nil {
		o.failed.Add(1)
	} else {
		o.ok.Add(1)
	}
}

// levels counts log records by level: the WARN and ERROR of a failed run are what an
// operator reads.
type levels struct {
	mu sync.Mutex
	n  map[slog.Level]int
}

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n[r.Level]++
	return nil
}
func (l *levels) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levels) WithGroup(string) slog.Handler      { return l }
func (l *levels) count(level slog.Level) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[level]
}

// config is a Config on runtimes rt with a real client-go queue on lim.
func config[R reconcile.Runtime](rt []R, lim *limiter, logger *slog.Logger) reconcile.Config[R] {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return reconcile.Config[R]{
		Name: "test.js", Version: "v1", Runtimes: rt, MaxRetries: 5, Logger: logger, Metrics: &observer{},
		Queue: workqueue.NewTypedRateLimitingQueueWithConfig[string](lim, workqueue.TypedRateLimitingQueueConfig[string]{}),
		Cache: &scriptcache.View{Store: scriptcache.New(nil), Resource: "v1/configmaps"},
	}
}

// runs counts reconcile runs by key.
type runs struct {
	mu sync.Mutex
	n  map[string]int
}

func newRuns() *runs { return &runs{n: map[string]int{}} }

func (r *runs) add(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[key]++
	return r.n[key]
}

func (r *runs) get(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[key]
}

func (r *runs) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.n {
		out[k] = v
	}
	return out
}

// eventually polls cond until it holds, failing the test after a generous deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recv receives from ch, failing the test after a generous deadline.
func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// within runs fn and fails the test if it has not returned after a generous deadline.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return in 20s", what)
	}
}
