package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	kdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/internal/netguard"
	"github.com/jsinformer/jsinformer/scripting"
)

// BenchmarkFetchThroughEngine: fetch through the whole runner. A writer patches ConfigMaps at
// fetchRate a second, each patch stamping bench/t with its send time; the runner's JS
// onUpdate fetches from a loopback HTTP server (through the runner's netguard client, allow
// list 127.0.0.1), reads the body, then logs; a client-go informer's Go handler does the same
// request with a plain http.Client. Latency is from the stamp to the handler having read the
// answer, so it holds the watch delivery both share; the runner's own cost is the difference.
// The two contenders run in one process, each on a namespace of its own, alternated round by
// round (the idle one costs nothing); CPU per request is the process's user+system time (the
// writer and the server included, alike for both) over a contender's phase, divided by its
// requests.
//
// Then, with the runner still running, JSINFORMER_FETCH_FLAT_REQUESTS requests (default
// 10,000) spread over JSINFORMER_FETCH_RELOADS reloads (default 20): live heap and goroutines
// before and after, once the retired versions are gone.
//
// JSINFORMER_FETCH_REQUESTS sets the requests per contender and round (default 4,000: 20 s at
// 200/s), JSINFORMER_FETCH_ROUNDS the rounds (default 2).
//
//	go test ./bench/ -run '^$' -bench BenchmarkFetchThroughEngine -benchtime 1x
func BenchmarkFetchThroughEngine(b *testing.B) {
	cp := controlplane.Require(b, env)
	perPhase, rounds := envInt(b, "JSINFORMER_FETCH_REQUESTS", 4000), envInt(b, "JSINFORMER_FETCH_ROUNDS", 2)
	flat, reloads := envInt(b, "JSINFORMER_FETCH_FLAT_REQUESTS", 10000), envInt(b, "JSINFORMER_FETCH_RELOADS", 20)
	srv := newFetchServer(b)
	defer srv.Close()
	for range b.N {
		fb := &fetchBench{cp: cp, url: srv.URL, nsJS: sliceNamespace(b, cp, "fetch-js"), nsGo: sliceNamespace(b, cp, "fetch-go")}
		fb.startRunner(b)
		stopGo := fb.startGo(b)
		var js, goc fetchSide
		for range rounds {
			js.add(fb.phase(b, fb.nsJS, perPhase))
			goc.add(fb.phase(b, fb.nsGo, perPhase))
		}
		stopGo()
		report(b, "js", &js)
		report(b, "go", &goc)
		b.ReportMetric(percentile(js.ms, 50)-percentile(goc.ms, 50), "overhead-p50-ms")
		b.ReportMetric((js.cpuPer()-goc.cpuPer())*1000, "overhead-cpu-µs/req")
		fb.flat(b, flat, reloads)
		fb.runner.stop(b)
	}
}

const fetchRate = 200 // requests (and so writes) a second

func report(b *testing.B, name string, s *fetchSide) {
	b.ReportMetric(percentile(s.ms, 50), name+"-p50-ms")
	b.ReportMetric(percentile(s.ms, 99), name+"-p99-ms")
	b.ReportMetric(s.cpuPer()*1000, name+"-cpu-µs/req")
	b.Logf("%s: %d requests, p50 %.2f ms, p99 %.2f ms, CPU %.0f µs/request", name, len(s.ms),
		percentile(s.ms, 50), percentile(s.ms, 99), s.cpuPer()*1000)
}

// fetchSide is one contender's measurements over its phases.
type fetchSide struct {
	ms  []float64
	cpu time.Duration
}

func (s *fetchSide) add(p fetchPhase) { s.ms, s.cpu = append(s.ms, p.ms...), s.cpu+p.cpu }

func (s *fetchSide) cpuPer() float64 { return ms(s.cpu) / float64(len(s.ms)) }

type fetchPhase struct {
	ms  []float64
	cpu time.Duration
}

// fetchBench is one iteration: the runner on nsJS, the Go informer on nsGo, both recording
// into lat, which each phase replaces.
type fetchBench struct {
	cp         *controlplane.ControlPlane
	url        string
	nsJS, nsGo string
	dir        string
	runner     *runner
	client     *netguard.Client // the runner's fetch client
	lat        atomic.Pointer[latencies]
}

// phase writes n patches to ns at fetchRate and returns the latencies the contender watching
// ns recorded, and the process's CPU time meanwhile.
func (fb *fetchBench) phase(b *testing.B, ns string, n int) fetchPhase {
	b.Helper()
	lat := newLatencies()
	fb.lat.Store(lat)
	before := processCPU()
	if err := writeN(fb.cp, ns, fetchRate, n); err != nil {
		b.Fatal(err)
	}
	got := lat.wait(b)
	p := fetchPhase{ms: got, cpu: processCPU() - before}
	if len(got) < n*9/10 {
		b.Fatalf("%s: only %d of %d requests timed", ns, len(got), n)
	}
	return p
}

func fetchScript(ns, url string, version int) string {
	return fmt.Sprintf(`// version %d
export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  async onUpdate(o, n) {
    const a = n.metadata.annotations || {};
    if (n.metadata.name !== "done") await (await fetch(%q + "?t=" + a["bench/t"])).text();
    log.info("lat", { name: n.metadata.name, t: a["bench/t"] || "" });
  },
};
`, version, ns, url)
}

// startRunner starts the engine on fetchScript, with the runner's fetch client allowing the
// loopback server only.
func (fb *fetchBench) startRunner(b *testing.B) {
	b.Helper()
	fb.dir = b.TempDir()
	writeScript(b, fb.dir, "fetch.js", fetchScript(fb.nsJS, fb.url, 0))
	allow, err := netguard.ParseList([]string{"127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	client := netguard.NewClient(netguard.Config{Allow: allow})
	fb.client = client
	r := &runner{tap: newLogTap(), ready: make(chan struct{}), done: make(chan error, 1)}
	e, err := engine.New(engine.Config{
		RESTConfig: fb.cp.Config, ScriptsDir: fb.dir, PaceGC: true, OnReady: func() { close(r.ready) },
		Logger: slog.New(fetchTap{logTap: r.tap, lat: &fb.lat}),
		Fetch:  func(string) scripting.HTTPClient { return client.Limited() },
	})
	if err != nil {
		b.Fatal(err)
	}
	r.engine = e
	fb.runner = r
	r.start()
	r.waitReady(b)
}

// startGo runs the client-go contender until the returned function is called.
func (fb *fetchBench) startGo(b *testing.B) (stop func()) {
	b.Helper()
	inf := kdynamicinformer.NewFilteredDynamicInformer(dynamic.NewForConfigOrDie(fb.cp.Config), configMapsGVR, fb.nsGo, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	plain := &http.Client{}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		u := obj.(*unstructured.Unstructured)
		t := u.GetAnnotations()["bench/t"]
		if u.GetName() != "done" {
			if err := get(plain, fb.url+"?t="+t); err != nil {
				b.Error(err)
				return
			}
		}
		fb.lat.Load().stamp(u.GetName(), t)
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		inf.RunWithContext(ctx)
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("client-go informer did not sync")
	}
	return func() {
		cancel()
		<-stopped
		plain.CloseIdleConnections()
	}
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// flat sends n requests through the runner over reloads reloads (a new version before each
// slice), then reports live heap and goroutines before and after.
func (fb *fetchBench) flat(b *testing.B, n, reloads int) {
	b.Helper()
	fb.client.CloseIdleConnections() // both readings without kept-alive connections' goroutines
	heap0, g0 := liveHeap(), runtime.NumGoroutine()
	per := max(1, n/(reloads+1))
	sent := 0
	for i := 0; i <= reloads; i++ {
		if i > 0 {
			content := fetchScript(fb.nsJS, fb.url, i)
			reloaded := fb.runner.tap.expectReload(scriptVersion(content))
			writeScript(b, fb.dir, "fetch.js", content)
			if err := waitClosed(reloadTimeout, reloaded); err != nil {
				b.Fatalf("reload %d: %v\n%s", i, err, fb.runner.tap.problems())
			}
		}
		fb.phase(b, fb.nsJS, per)
		sent += per
	}
	// The last retired version closes on a goroutine of the engine's, and a closed
	// connection's goroutines end on their own: poll, within a deadline, for the count to get
	// back to where it was.
	deadline := time.Now().Add(30 * time.Second)
	fb.client.CloseIdleConnections()
	g1 := runtime.NumGoroutine()
	for ; g1 > g0 && time.Now().Before(deadline); g1 = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	heap1 := liveHeap()
	b.ReportMetric(float64(heap0)/1024, "flat-heap-before-KiB")
	b.ReportMetric(float64(heap1)/1024, "flat-heap-after-KiB")
	b.ReportMetric(float64(g0), "flat-goroutines-before")
	b.ReportMetric(float64(g1), "flat-goroutines-after")
	b.Logf("flat: %d requests over %d reloads: live heap %d → %d KiB, goroutines %d → %d",
		sent, reloads, heap0/1024, heap1/1024, g0, g1)
}

// fetchTap is the runner's log handler: "lat" lines go to the current phase's latencies,
// everything else to the logTap (reloads, problems).
type fetchTap struct {
	*logTap
	lat *atomic.Pointer[latencies]
}

func (h fetchTap) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "lat" {
		name, t := stampOf(r)
		h.lat.Load().stamp(name, t)
		return nil
	}
	return h.logTap.Handle(ctx, r)
}

func (h fetchTap) WithAttrs(attrs []slog.Attr) slog.Handler {
	return fetchTap{logTap: h.logTap.WithAttrs(attrs).(*logTap), lat: h.lat}
}

// newFetchServer answers "ok" on 127.0.0.1.
func newFetchServer(b *testing.B) *httptest.Server {
	b.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return srv
}

// processCPU is the process's user+system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
