package engine_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

// stormScript is version k of a script whose "probe" add reports the cached state of ns.
func stormScript(ns string, k int) string {
	return watchScript(ns, fmt.Sprintf(`  // version %d
  onAdd(cm, ctx) {
    if (cm.metadata.name !== "probe") return;
    const state = ctx.cache.list({ namespace: %q })
      .filter((c) => c.metadata.name !== "probe")
      .map((c) => c.metadata.name + "=" + c.data.n);
    log.info("state", { version: %d, state: state.sort().join(",") });
  },`, k, ns, k))
}

func TestReloadsDuringUpdatesEndWithServerState(t *testing.T) {
	t.Parallel()
	const objects, reloads = 12, 50
	ns := uniqueName("reload-storm")
	r := startEngine(t, map[string]string{"a.js": stormScript(ns, 0)}, nil)
	r.namespace(t, ns)
	for i := range objects {
		r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("c%d", i), nil, map[string]any{"n": "0"}))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { churn(t, r, ns, objects, stop) })
	for k := 1; k <= reloads; k++ {
		src := stormScript(ns, k)
		r.write(t, "a.js", src)
		waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(src))
	}
	close(stop)
	wg.Wait()
	want := serverState(t, r, ns)
	r.create(t, configmapsGVR, configmap(ns, "probe", nil, map[string]any{"n": "probe"}))
	got := r.calls.waitFor(t, "final version's state", 1, call{Script: "a.js", Version: hashOf(stormScript(ns, reloads)), Object: ns + "/probe",
		Result: "ok", Logged: "state"}.match)
	if state := logAttr(got[0], "state", "state"); state != want {
		t.Fatalf("final version's cache differs from the server:\n got %s\nwant %s", state, want)
	}
}

// churn updates, deletes and recreates objects until stop is closed.
func churn(t *testing.T, r *runner, ns string, objects int, stop <-chan struct{}) {
	for n := 1; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		name := fmt.Sprintf("c%d", rand.IntN(objects))
		ri := r.dyn.Resource(configmapsGVR).Namespace(ns)
		var err error
		if n%7 == 0 {
			err = ri.Delete(t.Context(), name, metav1.DeleteOptions{})
			if err == nil {
				_, err = ri.Create(t.Context(), unstructuredOf(configmap(ns, name, nil, map[string]any{"n": fmt.Sprint(n)})), metav1.CreateOptions{})
			}
		} else {
			patch := fmt.Sprintf(`{"data":{"n":"%d"}}`, n)
			_, err = ri.Patch(t.Context(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
		}
		if err != nil {
			t.Errorf("churn %s: %v", name, err)
			return
		}
	}
}

func serverState(t *testing.T, r *runner, ns string) string {
	t.Helper()
	list, err := r.dyn.Resource(configmapsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var state []string
	for _, item := range list.Items {
		n, _, _ := unstructuredString(item.Object, "data", "n")
		state = append(state, item.GetName()+"="+n)
	}
	sort.Strings(state)
	return strings.Join(state, ",")
}

// TestNoLeakAfterManyReloads is not parallel: it counts the process's goroutines.
func TestNoLeakAfterManyReloads(t *testing.T) {
	reloads := 1000
	if testing.Short() {
		reloads = 50
	}
	ns := uniqueName("reload-leak")
	r := startEngine(t, map[string]string{"a.js": stormScript(ns, 0)}, func(c *engine.Config) { c.Debounce = 2 * time.Millisecond })
	r.namespace(t, ns)
	for i := range 5 {
		r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("c%d", i), nil, map[string]any{"n": "0"}))
	}
	reloadTo := func(k int) {
		src := stormScript(ns, k)
		r.write(t, "a.js", src)
		waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(src))
	}
	reloadTo(1) // warm up: first reload allocates what every later one reuses
	goroutines, heap := runtime.NumGoroutine(), liveHeap()
	for k := 2; k <= reloads; k++ {
		reloadTo(k)
	}
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > goroutines+5 {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before %d reloads, %d after", goroutines, reloads, runtime.NumGoroutine())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("goroutines %d -> %d, heap %d MB -> %d MB", goroutines, runtime.NumGoroutine(), heap>>20, liveHeap()>>20)
	const slack = 40 << 20 // one leaked runtime per reload would be hundreds of MB
	if after := liveHeap(); after > heap+slack {
		t.Fatalf("live heap grew from %d MB to %d MB over %d reloads", heap>>20, after>>20, reloads)
	}
	if got := len(r.engine.ActiveInformers()); got != 1 {
		t.Fatalf("informers after reloads = %d, want 1", got)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
