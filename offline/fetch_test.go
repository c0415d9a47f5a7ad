package offline_test

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/internal/netguard"
	"github.com/jsinformer/jsinformer/offline"
	"github.com/jsinformer/jsinformer/scripting"
)

// A reload while the old version's handler waits on fetch: the new version serves at once, the
// old version drains as always, and its request ends with the handler's deadline (it never
// outlives its call), as does one in flight when the engine is closed; and once the
// harness is closed no goroutine is left, through requests and 20 reloads. Not parallel: goleak.
func TestOfflineReloadWithFetchInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var active, arrived, cancelled atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fast" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		active.Add(1)
		arrived.Add(1)
		defer active.Add(-1)
		<-r.Context().Done() // never answers: only the client can end it
		cancelled.Add(1)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	allow, _ := netguard.ParseList([]string{"127.0.0.1"})
	client := netguard.NewClient(netguard.Config{Allow: allow, Limits: netguard.Limits{Timeout: 2 * time.Minute}})
	defer client.CloseIdleConnections()

	clock := clocktesting.NewFakeClock(epoch)
	cluster, err := memcluster.New(memcluster.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.New(offline.Config{Cluster: cluster, Clock: clock, Logger: slog.New(slog.DiscardHandler),
		HandlerTimeout: 3 * time.Second, Fetch: func(string) scripting.HTTPClient { return client.Limited() }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hanging := fmt.Sprintf(`export default { watch: "v1/configmaps", async onAdd(o) { await fetch(%q + "/hang") } }`, srv.URL)
	fast := func(i int) string {
		return fmt.Sprintf(`export default { watch: "v1/configmaps", async onUpdate(o, n) { await (await fetch(%q + "/fast")).text(); } } // %d`, srv.URL, i)
	}
	if err := h.Load(t.Context(), "f.js", []byte(hanging)); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Create(configmapsGVR, "default", configMap("default", "a"), memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the old version's request to reach the server", func() bool { return active.Load() == 1 })
	start := time.Now()
	if err := h.Load(t.Context(), "f.js", []byte(fast(0))); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the old version's request to be cancelled", func() bool { return cancelled.Load() == 1 && active.Load() == 0 })
	t.Logf("the old version's request was cancelled %s after the reload began", time.Since(start))
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the old version's request lasted %s after the reload, past the 3s handler deadline", d)
	}
	for i := 1; i <= 20; i++ { // reloads, each version fetching once
		if err := h.Load(t.Context(), "f.js", []byte(fast(i))); err != nil {
			t.Fatal(err)
		}
		cm := configMap("default", "a")
		cm.SetLabels(map[string]string{"n": fmt.Sprint(i)})
		if _, err := cluster.Update(configmapsGVR, "default", cm, memcluster.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Settle(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := arrived.Load(); n != 1 {
		t.Errorf("%d hanging requests arrived, want 1", n)
	}
	if err := h.Load(t.Context(), "f.js", []byte(hanging)); err != nil { // hangs on the next add
		t.Fatal(err)
	}
	if _, err := cluster.Create(configmapsGVR, "default", configMap("default", "b"), memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a second hanging request", func() bool { return active.Load() == 1 })
	start = time.Now()
	h.Close()
	// Close ends the call in flight by its deadline at the latest, and its request with it;
	// the server notices the cancelled request on its own goroutine, so wait for that.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close returned after %s: want the call in flight ended by the 3s deadline", d)
	}
	// The new version's initial add of a hangs too and may have ended by its deadline before
	// Close: what matters is that no request is left once Close has returned.
	waitUntil(t, "the requests in flight at Close to be cancelled", func() bool { return cancelled.Load() >= 2 && active.Load() == 0 })
	client.CloseIdleConnections()
	srv.Close()
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
