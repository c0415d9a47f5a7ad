package reconcile_test

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jsinformer/jsinformer/engine/internal/reconcile"
	"github.com/jsinformer/jsinformer/scripting"
)

// A key queued again while it runs waits for that run to end, however many workers are free,
// and its queued copies collapse into one more run; under load no key is ever in two runs at
// once while different keys run side by side.
func TestKeyNeverRunsOnTwoWorkersAtOnce(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			active := map[string]int{}
			done := newRuns()
			release, blocked := make(chan struct{}), make(chan struct{})
			var together atomic.Int32 // most runs seen at once, any keys
			run := func(key string, _ scripting.Event, interrupted <-chan struct{}) (scripting.ReconcileResult, error) {
				mu.Lock()
				active[key]++
				if active[key] > 1 {
					t.Errorf("%q runs on two workers at once", key)
				}
				n := int32(0)
				for _, c := range active {
					n += int32(c)
				}
				if n > together.Load() {
					together.Store(n)
				}
				mu.Unlock()
				if done.add(key) == 1 && key == "a" {
					close(blocked)
					select { // until released, or Close on a failed test
					case <-release:
					case <-interrupted:
					}
				}
				runtime.Gosched()
				mu.Lock()
				active[key]--
				mu.Unlock()
				return scripting.ReconcileResult{}, nil
			}
			w := reconcile.New(config(newFakes(t, workers, run), newLimiter(), nil))
			defer w.Close()
			w.Start()
			w.Enqueue("a", "test")
			recv(t, "a's first run", blocked)
			for range 3 {
				w.Enqueue("a", "test") // while a runs: queued once, after the run
			}
			w.Enqueue("b", "test")
			eventually(t, "b to run on a free worker", func() bool { return done.get("b") == 1 })
			if got := done.get("a"); got != 1 {
				t.Fatalf("a ran %d times while its first run was still running", got)
			}
			close(release)
			eventually(t, "a's queued run", func() bool { return done.get("a") == 2 })

			var enqueuers sync.WaitGroup
			for g := range 4 {
				enqueuers.Go(func() {
					for i := range 200 {
						w.Enqueue(fmt.Sprintf("k%d", (g+i)%8), "load")
					}
				})
			}
			enqueuers.Wait()
			w.Shutdown() // the workers finish every key queued, then return
			within(t, "Wait", w.Wait)
			if got := done.get("a"); got != 2 {
				t.Errorf("a ran %d times, want 2 (its three enqueues while running collapse into one run)", got)
			}
			if together.Load() < 2 {
				t.Errorf("at most %d runs at once on %d workers: the workers did not run side by side", together.Load(), workers)
			}
		})
	}
}

// A failing key is retried up to MaxRetries times, each failure logged as a WARN and the last
// as an ERROR, then dropped; a key that succeeds is forgotten and not run again.
func TestFailuresRetryUpToMaxRetriesThenDrop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		maxRetries int
		fails      int // the first runs that fail
		wantRuns   int
		gaveUp     bool
	}{
		{name: "no retries", maxRetries: 0, fails: 100, wantRuns: 1, gaveUp: true},
		{name: "always fails", maxRetries: 3, fails: 100, wantRuns: 4, gaveUp: true},
		{name: "succeeds on the last retry", maxRetries: 3, fails: 3, wantRuns: 4},
		{name: "succeeds on the third run", maxRetries: 5, fails: 2, wantRuns: 3},
		{name: "succeeds at once", maxRetries: 5, fails: 0, wantRuns: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := newRuns()
			run := func(key string, _ scripting.Event, _ <-chan struct{}) (scripting.ReconcileResult, error) {
				if done.add(key) <= tc.fails {
					return scripting.ReconcileResult{}, errors.New("boom")
				}
				return scripting.ReconcileResult{}, nil
			}
			lim, logs := newLimiter(), &levels{n: map[slog.Level]int{}}
			cfg := config(newFakes(t, 1, run), lim, slog.New(logs))
			cfg.MaxRetries = tc.maxRetries
			obs := &observer{}
			cfg.Metrics = obs
			w := reconcile.New(cfg)
			defer w.Close()
			w.Enqueue("ns/x", "test")
			w.Start()
			// The key is forgotten once it succeeded or was given up on: nothing requeues it after.
			eventually(t, "the key to be forgotten", func() bool { _, f := lim.counts("ns/x"); return f > 0 })
			w.Shutdown() // a retry queued by then would still run: the workers drain the queue
			within(t, "Wait", w.Wait)
			retries, _ := lim.counts("ns/x")
			if got := done.get("ns/x"); got != tc.wantRuns {
				t.Errorf("%d runs, want %d", got, tc.wantRuns)
			}
			if retries != tc.wantRuns-1 {
				t.Errorf("%d retries queued, want %d", retries, tc.wantRuns-1)
			}
			wantErrors := 0
			if tc.gaveUp {
				wantErrors = 1
			}
			if got, want := logs.count(slog.LevelWarn), min(tc.fails, tc.wantRuns)-wantErrors; got != want {
				t.Errorf("%d WARN (will retry), want %d", got, want)
			}
			if got := logs.count(slog.LevelError); got != wantErrors {
				t.Errorf("%d ERROR (giving up), want %d", got, wantErrors)
			}
			if got, want := int(obs.failed.Load()), min(tc.fails, tc.wantRuns); got != want {
				t.Errorf("%d failed runs observed, want %d", got, want)
			}
		})
	}
}

// A key another replica owns is not queued (Handles) or, when ownership moved after it was
// queued, dropped at its turn (Begin): never run, never retried; every run begun is ended.
func TestKeysOtherReplicasOwnAreNotRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handles func(string) bool
		begins  func(string) bool
		want    []string
	}{
		{name: "owns every key", want: []string{"mine", "moved", "theirs"}},
		{name: "another replica's key is not queued", handles: func(k string) bool { return k != "theirs" },
			want: []string{"mine", "moved"}},
		{name: "a key that moved since it was queued is dropped", handles: func(k string) bool { return k != "theirs" },
			begins: func(k string) bool { return k == "mine" }, want: []string{"mine"}},
		{name: "not leading: nothing runs", begins: func(string) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := newRuns()
			run := func(key string, _ scripting.Event, _ <-chan struct{}) (scripting.ReconcileResult, error) {
				done.add(key)
				return scripting.ReconcileResult{}, errors.New("retry me") // a dropped key must not come back this way
			}
			lim := newLimiter()
			cfg := config(newFakes(t, 2, run), lim, nil)
			cfg.MaxRetries = 1
			cfg.Handles = tc.handles
			var inFlight atomic.Int32
			if tc.begins != nil {
				cfg.Begin = func(key string) (func(), bool) {
					if !tc.begins(key) {
						return nil, false
					}
					inFlight.Add(1)
					return func() { inFlight.Add(-1) }, true
				}
			}
			w := reconcile.New(cfg)
			defer w.Close()
			for _, k := range []string{"mine", "theirs", "moved"} {
				w.Enqueue(k, "test")
			}
			w.Start()
			eventually(t, "the runs to end", func() bool {
				for _, k := range tc.want {
					if _, f := lim.counts(k); f == 0 {
						return false
					}
				}
				return true
			})
			w.Shutdown()
			within(t, "Wait", w.Wait)
			got := slices.Sorted(func(yield func(string) bool) {
				for k := range done.snapshot() {
					if !yield(k) {
						return
					}
				}
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("ran %v, want %v", got, tc.want)
			}
			for _, k := range []string{"mine", "theirs", "moved"} {
				if r, _ := lim.counts(k); !slices.Contains(tc.want, k) && r > 0 {
					t.Errorf("%s, never run, was retried %d times", k, r)
				}
			}
			if n := inFlight.Load(); n != 0 {
				t.Errorf("%d runs begun and never ended", n)
			}
		})
	}
}
