package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// saveScript is version k of a reconcile script with four workers whose reconcile takes
// about 400 ms, as in the measurement of issue 19.
func saveScript(ns string, k int) string {
	return fmt.Sprintf(`// save %d
export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  concurrency: 4,
  onUpdate() {},
  reconcile() { const until = Date.now() + 400; while (Date.now() < until) {} },
};`, k, ns)
}

// A reconcile script saved 40 times about every 350 ms while its objects change: once things
// settle, the process runs the runtimes and goroutines of one version, as after a single save.
// Not parallel: it counts the process's goroutines and runtimes.
func TestRapidSavesOfAReconcileScriptLeaveNothing(t *testing.T) {
	const saves, objects = 40, 8
	ns := uniqueName("rapid-saves")
	base := scripting.LiveRuntimes()
	r := startEngine(t, map[string]string{"a.js": saveScript(ns, 0)}, nil)
	r.namespace(t, ns)
	for i := range objects {
		r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("c%d", i), nil, map[string]any{"n": "0"}))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { churn(t, r, ns, objects, stop) })
	settled := func() (goroutines int, rss int64) {
		eventually(t, "the runtimes of one version", func() error {
			if got, want := scripting.LiveRuntimes()-base, int64(5); got != want {
				return fmt.Errorf("%d runtimes live, want %d (one worker, four reconcilers)", got, want)
			}
			return nil
		})
		return runtime.NumGoroutine(), rssBytes(t)
	}
	g1, rss1 := settled()
	for k := 1; k <= saves; k++ {
		r.write(t, "a.js", saveScript(ns, k))
		time.Sleep(350 * time.Millisecond) // the pace of an editor's saves, not a wait for a condition
	}
	last := saveScript(ns, saves)
	waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(last))
	close(stop)
	wg.Wait()
	g2, rss2 := settled()
	t.Logf("after one save: %d goroutines, RSS %d MB; after %d saves: %d goroutines, RSS %d MB", g1, rss1>>20, saves, g2, rss2>>20)
	eventually(t, "goroutines back to one version's", func() error {
		if n := runtime.NumGoroutine(); n > g1+10 {
			return fmt.Errorf("%d goroutines after %d saves, %d after one", n, saves, g1)
		}
		return nil
	})
}

// rssBytes is the process's resident set.
func rssBytes(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", "self", "status"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// hogScript keeps 30,000 small objects more on every update.
func hogScript(ns string) string {
	return "const kept = [];\n" + watchScript(ns, `  onUpdate(old, cm) {
    log.info("hog ran", { n: cm.data.n });
    for (let i = 0; i < 30000; i++) kept.push({ i, s: "x" + i });
  },`)
}

// The memory guard's stop, in the scenario of issue 19 (a 400 MiB limit; a script keeping
// 30,000 small objects per update, one update every 100 ms) against the real control plane:
// the live heap, as the collector measures it (read every 10 ms), never passes the limit; the
// stop interrupts the hog at once (it runs no call after the stop) and drops its queued
// events, saying how many; and once a harmless version replaces it, the live heap returns to
// within 40 MB of its level before the hog. Not parallel: it measures the process's live heap.
func TestMemoryGuardStopFreesTheHogUnderTheLimit(t *testing.T) {
	const limit = 400 << 20
	ns := uniqueName("hog")
	reg := prometheus.NewPedanticRegistry()
	r := startEngine(t, map[string]string{"hog.js": watchScript(ns, `  onUpdate() {},`)}, func(c *engine.Config) {
		c.Registerer, c.MemoryLimit, c.MemoryCheckInterval = reg, limit, 200*time.Millisecond
		c.HandlerTimeout = 30 * time.Second // a loaded machine makes each hog call take seconds
	})
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "c", nil, map[string]any{"n": "0"}))
	before := liveHeapAfterGC()

	var peak uint64
	stopSampling := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { peak = samplePeak(stopSampling) })
	wg.Go(func() {
		for n := 1; ; n++ {
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if err := r.tryPatch(t, configmapsGVR, ns, "c", fmt.Sprintf(`{"data":{"n":"%d"}}`, n)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	r.write(t, "hog.js", hogScript(ns))
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if s, _ := r.engine.Status().Script("hog.js"); s.State == status.ScriptStopped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the guard did not stop the hog within 5 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The operator's contract: one ERROR naming the script and what the stop dropped.
	stops := r.log.find(msg("script stopped: its memory kept growing near the memory limit; it stays stopped until its file changes", "script", "hog.js"))
	if len(stops) != 1 {
		t.Fatalf("the stop was logged %d times, want once", len(stops))
	}
	if stops[0].attrs["dropped_events"] == "" {
		t.Errorf("the stop's ERROR line does not say how many events it dropped: %v", stops[0])
	}
	s, _ := r.engine.Status().Script("hog.js")
	stop, ok := lastLoad(s, status.LoadStopped)
	if !ok {
		t.Fatalf("the stop is not among the loads: %+v", s.Loads)
	}
	harmless := watchScript(ns, `  onUpdate() {},`)
	r.write(t, "hog.js", harmless)
	r.calls.waitFor(t, "the harmless version handling an update", 1, call{Script: "hog.js", Version: hashOf(harmless), Handler: "onUpdate", Result: "ok"}.match)
	close(stopSampling)
	wg.Wait()
	// Every call of the hog has returned: its version was replaced.
	late := r.calls.find(func(rec inspection.TraceRecord) bool {
		return rec.Version == hashOf(hogScript(ns)) && rec.Handler != "" && rec.Time.After(stop.At)
	})
	if len(late) > 0 {
		t.Errorf("the hog began %d calls after its stop", len(late))
	}
	t.Logf("live heap: %d MB before the hog, peak %d MB with a %d MB limit; stop: %v", before>>20, peak>>20, limit>>20, stops[0].attrs)
	if peak >= limit {
		t.Errorf("the live heap peaked at %d MB, passing the %d MB limit", peak>>20, limit>>20)
	}
	eventually(t, "the live heap back near its level before the hog", func() error {
		if after := liveHeapAfterGC(); after > before+40<<20 {
			return fmt.Errorf("live heap %d MB after the replacement loaded, %d MB before the hog", after>>20, before>>20)
		}
		return nil
	})
}

// samplePeak reads the live heap the last collection measured every 10 ms until stop, and
// returns the largest reading.
func samplePeak(stop <-chan struct{}) uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	for {
		metrics.Read(sample)
		peak = max(peak, sample[0].Value.Uint64())
		select {
		case <-stop:
			return peak
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// liveHeapAfterGC is the heap a full collection leaves live, from runtime/metrics.
func liveHeapAfterGC() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
