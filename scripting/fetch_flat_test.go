package scripting

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/netguard"
)

const (
	flatReloads  = 20
	flatRequests = 10000 // in all, flatRequests/flatReloads per version
	// flatHeapSlack and flatGoroutineSlack are how far the live heap and the goroutine count
	// may end above where they started: far below what a leak of one goroutine, timer or
	// runtime per request or per version would leave (10,000 goroutines are ~80 MiB of
	// stacks; 20 goja runtimes with their programs several MiB).
	flatHeapSlack      = 4 << 20
	flatGoroutineSlack = 5
)

// TestFetchFlatOverRequestsAndReloads: 10,000 fetch calls from handlers to a loopback server
// across 20 versions of the script, each closed before the next is loaded as the engine's
// reload does, every request with an AbortSignal.timeout (a timer) and its body read. When
// the last version is closed and the idle connections released, the live heap (after GC) and
// the goroutine count are back within a small bound of where they were before the first.
// Not parallel: it measures the whole process.
func TestFetchFlatOverRequestsAndReloads(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 requests")
	}
	srv := newFetchServerTB(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	allow, err := netguard.ParseList([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	c := netguard.NewClient(netguard.Config{Allow: allow, Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }})
	t.Cleanup(c.CloseIdleConnections)
	runVersion(t, c, srv, 0, 10) // warm up: the transport, goja's and the package's lazies
	c.CloseIdleConnections()
	heap0, gs0 := liveHeap(), runtime.NumGoroutine()
	start := time.Now()
	for v := 1; v <= flatReloads; v++ {
		runVersion(t, c, srv, v, flatRequests/flatReloads)
	}
	c.CloseIdleConnections()
	t.Logf("%d requests over %d versions in %s", flatRequests, flatReloads, time.Since(start).Round(time.Millisecond))
	waitFlat(t, heap0, gs0)
}

// runVersion loads one version of the script, makes n calls of one fetch each and closes it.
func runVersion(t *testing.T, c *netguard.Client, srv string, v, n int) {
	t.Helper()
	src := fmt.Sprintf(`// version %d
export default { async onAdd() {
  const r = await fetch(%q, { signal: AbortSignal.timeout(60000) });
  if ((await r.text()) !== "ok") throw new Error("unexpected body");
} }`, v, srv)
	s := newTestScript(t, "flat.js", src, Options{Timeout: 10 * time.Second, HTTP: c.Limited()})
	defer s.Close()
	for i := range n {
		if err := s.OnAdd(sample(), Event{}); err != nil {
			t.Fatalf("version %d, call %d: %v", v, i, err)
		}
	}
}

// waitFlat polls, with a deadline, until the goroutine count and the live heap are within
// their slack of the start: goroutines of closed connections take a moment to return.
func waitFlat(t *testing.T, heap0 uint64, gs0 int) {
	t.Helper()
	var heap uint64
	var gs int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		heap, gs = liveHeap(), runtime.NumGoroutine()
		if gs <= gs0+flatGoroutineSlack && heap <= heap0+flatHeapSlack {
			t.Logf("live heap %d KiB -> %d KiB, goroutines %d -> %d", heap0>>10, heap>>10, gs0, gs)
			return
		}
	}
	t.Fatalf("not flat: live heap %d KiB -> %d KiB (slack %d KiB), goroutines %d -> %d (slack %d)",
		heap0>>10, heap>>10, flatHeapSlack>>10, gs0, gs, flatGoroutineSlack)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // a second cycle frees what the first only finalized
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
