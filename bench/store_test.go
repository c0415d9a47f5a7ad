package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/store"
)

// BenchmarkStore: ctx.store against the real control plane, short (seconds).
//
//   - get and set latency from a handler: a JS onAdd doing one ctx.store.get (or set),
//     called JSINFORMER_STORE_CALLS times each (default 300, one of each every 30 ms),
//     against the baseline of a Go client-go GET (or Update carrying the resourceVersion) of
//     a ConfigMap holding the same key, in the same run; ratios of p50 and p99.
//
//   - writes per second to the API server for 1,000 keys updated every second, for
//     JSINFORMER_STORE_SECONDS seconds (default 3): all 1,000 at the start of each second
//     (burst), and spread evenly over the second, key k at k ms (spread; and spread with
//     --store-write-window 1s); the ConfigMap writes (POST, PUT) counted at the client. PeprStore's design for the same workload: one
//     JSON Patch per capability every 4 s (src/lib/controller/store.ts, debounceBackoffSend):
//     0.25 writes/s, unacknowledged and without a resourceVersion.
//
//   - memory per 1,000 keys: the live heap a Store holding 10,000 keys (read once, so every
//     shard's document is cached) adds, per 1,000 keys, against the keys' and values' own
//     bytes; and the ConfigMap bytes per 1,000 keys on the API server.
//
//     go test ./bench/ -run '^$' -bench BenchmarkStore -benchtime 1x -v
func BenchmarkStore(b *testing.B) {
	cp := controlplane.Require(b, env)
	calls, seconds := envInt(b, "JSINFORMER_STORE_CALLS", 300), envInt(b, "JSINFORMER_STORE_SECONDS", 3)
	for range b.N {
		ns := fmt.Sprintf("store-bench-%d", time.Now().UnixNano())
		cs, writes := storeClient(b, cp)
		if _, err := cs.CoreV1().Namespaces().Create(b.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		storeLatency(b, cs, ns, calls)
		storeWriteRate(b, cs, writes, ns, seconds)
		storeMemory(b, cs, ns)
	}
}

// storeCounter counts the ConfigMap writes (POST, PUT) a client sends.
type storeCounter struct {
	next   http.RoundTripper
	writes atomic.Int64
}

func (c *storeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if (r.Method == http.MethodPut || r.Method == http.MethodPost) && strings.Contains(r.URL.Path, "/configmaps") {
		c.writes.Add(1)
	}
	return c.next.RoundTrip(r)
}

func storeClient(b *testing.B, cp *controlplane.ControlPlane) (kubernetes.Interface, *storeCounter) {
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = 5000, 5000
	c := &storeCounter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { c.next = rt; return c })
	return kubernetes.NewForConfigOrDie(cfg), c
}

func newBenchStore(b *testing.B, cs kubernetes.Interface, ns string, maxKeys int) *store.Store {
	st, err := store.New(cs.CoreV1(), store.Options{Namespace: ns, Limits: store.Limits{MaxKeys: maxKeys}}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// benchScope adapts a *store.Scope to scripting.Store, as the engine does.
type benchScope struct{ sc *store.Scope }

func (s benchScope) Get(ctx context.Context, key string) (scripting.StoreEntry, bool, error) {
	e, ok, err := s.sc.Get(ctx, key)
	return scripting.StoreEntry{Key: e.Key, Value: e.Value, Version: e.Version}, ok, err
}

func (s benchScope) Set(ctx context.Context, key string, value []byte, o scripting.StoreSetOptions) (int64, error) {
	return s.sc.Set(ctx, key, json.RawMessage(value), store.SetOptions{TTL: o.TTL, Expect: o.Expect})
}

func (s benchScope) Delete(ctx context.Context, key string, expect *int64) (bool, error) {
	return s.sc.Delete(ctx, key, store.DeleteOptions{Expect: expect})
}

func (s benchScope) List(ctx context.Context, prefix string) ([]scripting.StoreEntry, error) {
	entries, err := s.sc.List(ctx, prefix)
	out := make([]scripting.StoreEntry, len(entries))
	for i, e := range entries {
		out[i] = scripting.StoreEntry{Key: e.Key, Value: e.Value, Version: e.Version}
	}
	return out, err
}

const storeScript = `export default {
  onAdd(obj, ctx) {
    if (obj.metadata.name === "get") { ctx.store.get("k"); return; }
    ctx.store.set("k", { n: obj.metadata.generation, note: "a small value" });
  },
};`

// storeLatency measures a handler's get and set against client-go's GET and Update.
func storeLatency(b *testing.B, cs kubernetes.Interface, ns string, calls int) {
	st := newBenchStore(b, cs, ns, 0)
	defer st.Close()
	prog, err := scripting.Compile("store-bench.js", []byte(storeScript))
	if err != nil {
		b.Fatal(err)
	}
	s, err := prog.Instantiate(scripting.Options{Store: benchScope{st.Scope("store-bench.js")}, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	obj := func(name string, gen int) scripting.Object {
		return scripting.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns, "generation": int64(gen)}}
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(b.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "baseline"}, Data: map[string]string{"k": "{}"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var jsGet, jsSet, goGet, goSet []float64
	time1 := func(dst *[]float64, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*dst = append(*dst, ms(time.Since(start)))
	}
	// Alternated call by call, so load changes hit all four alike; one round every 30 ms, more
	// than the store's default window (20 ms), so each set finds its shard idle (a set within
	// a window of the shard's last update waits out the rest of the window: docs/store.md).
	pace := time.NewTicker(30 * time.Millisecond)
	defer pace.Stop()
	for i := range calls {
		<-pace.C
		time1(&jsSet, func() error { return s.OnAdd(obj("set", i), scripting.Event{}) })
		time1(&jsGet, func() error { return s.OnAdd(obj("get", i), scripting.Event{}) })
		time1(&goSet, func() error {
			cm.Data["k"] = fmt.Sprintf(`{"n":%d,"note":"a small value"}`, i)
			var err error
			cm, err = cms.Update(b.Context(), cm, metav1.UpdateOptions{})
			return err
		})
		time1(&goGet, func() error { _, err := cms.Get(b.Context(), "baseline", metav1.GetOptions{}); return err })
	}
	for _, x := range []struct {
		name     string
		js, base []float64
	}{{"get", jsGet, goGet}, {"set", jsSet, goSet}} {
		b.ReportMetric(percentile(x.js, 50), x.name+"-p50-ms")
		b.ReportMetric(percentile(x.js, 99), x.name+"-p99-ms")
		b.ReportMetric(percentile(x.js, 50)/percentile(x.base, 50), x.name+"-p50-ratio")
		b.ReportMetric(percentile(x.js, 99)/percentile(x.base, 99), x.name+"-p99-ratio")
		b.Logf("%s from a handler: p50 %.2f ms, p99 %.2f ms; client-go baseline p50 %.2f ms, p99 %.2f ms (%d calls)",
			x.name, percentile(x.js, 50), percentile(x.js, 99), percentile(x.base, 50), percentile(x.base, 99), len(x.js))
	}
}

// storeWriteRate updates 1,000 keys every second, burst and spread, counting ConfigMap writes.
func storeWriteRate(b *testing.B, cs kubernetes.Interface, writes *storeCounter, ns string, seconds int) {
	const keys = 1000
	for _, mode := range []string{"burst", "spread", "spread-window-1s"} {
		opts := store.Options{Namespace: ns}
		if mode == "spread-window-1s" {
			opts.Window = time.Second // --store-write-window 1s
		}
		st, err := store.New(cs.CoreV1(), opts, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		sc := st.Scope("rate-" + mode)
		set := func(k, round int) {
			if _, err := sc.Set(b.Context(), fmt.Sprint("key-", k), json.RawMessage(fmt.Sprint(round)), store.SetOptions{}); err != nil {
				b.Error(err)
			}
		}
		before := writes.writes.Load()
		start := time.Now()
		var wg sync.WaitGroup
		for round := range seconds {
			tick := start.Add(time.Duration(round) * time.Second)
			time.Sleep(time.Until(tick))
			if mode == "burst" {
				for k := range keys {
					wg.Go(func() { set(k, round) })
				}
				continue
			}
			for k := range keys { // key k at k ms into the second, each from a goroutine of its own
				wg.Go(func() {
					time.Sleep(time.Until(tick.Add(time.Duration(k) * time.Millisecond)))
					set(k, round)
				})
			}
		}
		wg.Wait()
		elapsed := time.Since(start)
		st.Close()
		n := writes.writes.Load() - before
		rate := float64(n) / max(elapsed.Seconds(), float64(seconds))
		b.ReportMetric(rate, mode+"-writes/s")
		b.ReportMetric(rate/0.25, mode+"-writes-vs-peprstore")
		b.Logf("%s: %d key updates in %d ConfigMap writes over %.1f s (%.1f writes/s, %.0f× PeprStore's 0.25/s)",
			mode, keys*seconds, n, max(elapsed.Seconds(), float64(seconds)), rate, rate/0.25)
	}
}

// storeMemory measures the live heap a Store holding 10,000 keys adds per 1,000 keys.
func storeMemory(b *testing.B, cs kubernetes.Interface, ns string) {
	const n = 10000
	st := newBenchStore(b, cs, ns, n)
	defer st.Close()
	sc := st.Scope("memory")
	var raw int
	var wg sync.WaitGroup
	for w := range 1000 {
		wg.Go(func() {
			for i := w; i < n; i += 1000 {
				k, v := fmt.Sprintf("object/%05d", i), fmt.Sprintf(`{"sent":%d,"to":"team-%d"}`, 1765000000000+i, i%7)
				if _, err := sc.Set(b.Context(), k, json.RawMessage(v), store.SetOptions{}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	heapBefore := liveHeap()
	fresh := newBenchStore(b, cs, ns, n) // a restarted runner: nothing cached yet
	defer fresh.Close()
	list, err := fresh.Scope("memory").List(b.Context(), "")
	if err != nil || len(list) != n {
		b.Fatalf("list = %d, %v", len(list), err)
	}
	for _, e := range list {
		raw += len(e.Key) + len(e.Value)
	}
	// list is dead from here: what stays is the Store's cache of each shard's document.
	heapAfter := liveHeap()
	cms, err := cs.CoreV1().ConfigMaps(ns).List(b.Context(), metav1.ListOptions{LabelSelector: store.LabelScript + "=" + store.ScriptID("memory")})
	if err != nil {
		b.Fatal(err)
	}
	var onServer int
	for _, cm := range cms.Items {
		onServer += len(cm.Data[store.DataKey])
	}
	perK := float64(heapAfter-heapBefore) / (n / 1000)
	b.ReportMetric(perK/1024, "heap-KiB/1000keys")
	b.ReportMetric(perK/(float64(raw)/(n/1000)), "heap-vs-raw")
	b.ReportMetric(float64(onServer)/(n/1000)/1024, "configmap-KiB/1000keys")
	b.Logf("memory: %.1f KiB of live heap per 1,000 keys cached (%.1f× their %.1f KiB of keys and values); %.1f KiB of ConfigMap data per 1,000 keys",
		perK/1024, perK/(float64(raw)/(n/1000)), float64(raw)/(n/1000)/1024, float64(onServer)/(n/1000)/1024)
	runtime.KeepAlive(fresh)
}
