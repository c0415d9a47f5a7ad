package version

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// A Version on its own, without the engine: built by New, driven through the calls the
// loader makes, released by Close. The engine's tests cover it subscribed to informers.

// testClock is the wall clock with client-go's rate-limited workqueue.
type testClock struct{ clock.RealClock }

func (testClock) NewQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}

// newTestVersion builds a version of src as the engine would, but for the informers (it is
// never subscribed); onClose counts its Config.OnClose calls.
func newTestVersion(t *testing.T, src string, onClose *atomic.Int32) *Version {
	t.Helper()
	prog, err := scripting.CompileIn(t.TempDir(), "a.js", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	opts := scripting.Options{Logger: slog.New(slog.DiscardHandler), Timeout: 2 * time.Second}
	script, err := prog.Instantiate(opts)
	if err != nil {
		t.Fatal(err)
	}
	stats := enginemetrics.NewEngine(nil)
	var counts status.Counts
	res := dynamicinformer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
	v, err := New(Config{
		Name: "a.js", Hash: "abc", Program: prog, Options: opts, Script: script, Recorder: trace.NewWorker(nil, nil),
		Def: script.Definition(), Targets: []Target{{Resource: res, Key: dynamicinformer.Key{GVR: res.GVR}}}, Started: time.Now(),
		Pauses: inspect.NewPauses(), Logger: opts.Logger,
		Handler:       func(h string) *enginemetrics.Handler { return stats.Handler("a.js", h, counts.Get("a.js", h)) },
		ScriptMetrics: enginemetrics.NewScripts(100, time.Second), Clock: testClock{},
		Tap:     func(o scripting.Options) (scripting.Options, *trace.Worker) { return o, trace.NewWorker(nil, nil) },
		OnClose: func() { onClose.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every way a version ends releases every runtime it was built with (the worker's, the index
// stage's two, one per reconcile worker) and every goroutine it started, and ends its
// collector's lift once, whether it ever started or not. Not parallel: it counts the
// process's runtimes and goroutines.
func TestCloseReleasesEverything(t *testing.T) {
	scripts := []struct {
		name     string
		src      string
		runtimes int64
	}{
		{"handlers only", `export default { onAdd() {} }`, 1},
		{"index functions", `export default { indexers: { byName: (o) => [o.metadata.name] }, onAdd() {} }`, 3},
		{"reconcile", `export default { concurrency: 3, reconcile() {} }`, 4},
		{"index functions and reconcile", `export default { concurrency: 2, indexers: { byName: (o) => [o.metadata.name] }, reconcile() {} }`, 5},
	}
	ends := []struct {
		name string
		end  func(t *testing.T, v *Version)
	}{
		{"closed before it started", func(*testing.T, *Version) {}},
		{"retired with drain", func(t *testing.T, v *Version) {
			v.Start()
			v.StartReconcile()
			v.Retire(true)
			if !v.WaitIdle(10 * time.Second) {
				t.Error("a version with nothing queued did not drain within 10s")
			}
		}},
		{"dropped", func(_ *testing.T, v *Version) {
			v.Start()
			v.StartReconcile()
			v.Retire(false)
			v.Drop()
		}},
	}
	for _, s := range scripts {
		for _, end := range ends {
			t.Run(s.name+", "+end.name, func(t *testing.T) {
				ignore := goleak.IgnoreCurrent()
				base := scripting.LiveRuntimes()
				var closed atomic.Int32
				v := newTestVersion(t, s.src, &closed)
				if got := scripting.LiveRuntimes() - base; got != s.runtimes {
					t.Fatalf("New made %d runtimes, want %d", got, s.runtimes)
				}
				end.end(t, v)
				v.Close()
				v.Close() // idempotent
				if got := scripting.LiveRuntimes() - base; got != 0 {
					t.Errorf("%d runtimes live after Close", got)
				}
				if n := closed.Load(); n != 1 {
					t.Errorf("OnClose ran %d times, want once", n)
				}
				if err := goleak.Find(ignore); err != nil {
					t.Errorf("goroutines left after Close: %v", err)
				}
			})
		}
	}
}

// Retiring a busy version: with drain its worker still runs what was queued before, in
// order; dropped, it runs none of it and counts it, with the reconcile keys it skipped.
func TestRetireDrainsOrDrops(t *testing.T) {
	t.Parallel()
	const queued, keys = 5, 2
	for _, drain := range []bool{true, false} {
		t.Run(fmt.Sprint("drain=", drain), func(t *testing.T) {
			t.Parallel()
			var closed atomic.Int32
			v := newTestVersion(t, `export default { onAdd() {}, reconcile() {} }`, &closed)
			defer v.Close()
			v.Start()
			busy, release := make(chan struct{}), make(chan struct{})
			v.Do(func() { close(busy); <-release }) // the worker is in a call while the rest queue
			<-busy
			var mu sync.Mutex
			var ran []int
			for i := range queued {
				if !v.Do(func() { mu.Lock(); ran = append(ran, i); mu.Unlock() }) {
					t.Fatalf("Do %d refused before the retirement", i)
				}
			}
			for i := range keys {
				v.Requeue(fmt.Sprintf("ns/k%d", i), "test")
			}
			if !v.Retire(drain) {
				t.Fatal("the first Retire reported the version retired already")
			}
			if v.Retire(drain) {
				t.Error("a second Retire reported it retired the version again")
			}
			if v.Do(func() {}) {
				t.Error("Do queued a function after the retirement")
			}
			var events, dropped int
			if !drain {
				events, dropped = v.Drop()
			}
			close(release)
			if !v.WaitIdle(10 * time.Second) {
				t.Fatal("the worker did not finish within 10s")
			}
			v.Close()
			mu.Lock()
			defer mu.Unlock()
			if drain {
				if want := []int{0, 1, 2, 3, 4}; !slices.Equal(ran, want) {
					t.Errorf("ran %v, want %v: every function queued before the retirement, in order", ran, want)
				}
				return
			}
			if events != queued || dropped != keys {
				t.Errorf("Drop counted %d events and %d keys, want %d and %d", events, dropped, queued, keys)
			}
			if len(ran) != 0 {
				t.Errorf("a dropped version ran %v", ran)
			}
		})
	}
}
