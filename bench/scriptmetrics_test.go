package bench

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Metrics from scripts (issue 23): a gauge family with one series per seeded Deployment,
// computed at scrape time by a script's collect, against a hand-written Go
// prometheus.Collector over a client-go informer holding the same Deployments, in the same
// process; scrapes alternate between the two, round by round.

// replicasFamily is the family both contenders serve.
const replicasFamily = "bench_deployment_replicas"

// metricsScript is the script whose collect the benchmark scrapes.
var metricsScript = `export default {
  watch: { resource: "apps/v1/deployments", namespace: "` + benchNamespace + `" },
  metrics: {
    ` + replicasFamily + `: {
      type: "gauge", help: "spec.replicas of each Deployment", labels: ["namespace", "name"],
      collect: (ctx) => ctx.cache.list().map((d) => ({
        labels: { namespace: d.metadata.namespace, name: d.metadata.name },
        value: d.spec.replicas,
      })),
    },
  },
};
`

// scrapeRounds is how many scrapes of each contender BenchmarkScriptMetricsScrape times.
const scrapeRounds = 15

// BenchmarkScriptMetricsScrape reports, per contender, the median time of one scrape
// (Gather and the text exposition, as /metrics serves it) of the 20,000-series family, their
// ratio, and the runner's memory: its live heap before any scrape and after scrapeRounds of
// them (both after two GCs), their difference as a share of the process's RSS, and the bytes
// one JS scrape allocates.
func BenchmarkScriptMetricsScrape(b *testing.B) {
	cp := seeded(b)
	for range b.N {
		reg, stop := startMetricsRunner(b, cp, map[string]string{"metrics.js": metricsScript})
		jsScrape := func() (int, error) { return scrape(reg) }
		heapBefore := liveHeap() // loaded and synced, never scraped
		var allocs uint64
		var js, goc []float64
		for range scrapeRounds {
			before := totalAlloc()
			js = append(js, timed(b, jsScrape))
			allocs = totalAlloc() - before
		}
		heapAfter := liveHeap()
		rss := rssBytes(b)

		goReg, stopGo := startGoCollector(b, cp)
		goScrape := func() (int, error) { return scrape(goReg) }
		js = js[:0]
		for range scrapeRounds { // alternated, so both see the same machine
			js = append(js, timed(b, jsScrape))
			goc = append(goc, timed(b, goScrape))
		}
		stopGo()
		stop()
		extra := heapAfter - heapBefore
		b.ReportMetric(median(js), "js-scrape-ms")
		b.ReportMetric(median(goc), "go-scrape-ms")
		b.ReportMetric(median(js)/median(goc), "js/go")
		b.ReportMetric(mb(extra), "extra-heap-MB")
		b.ReportMetric(mb(rss), "rss-MB")
		b.ReportMetric(100*float64(extra)/float64(rss), "extra-%-of-rss")
		b.ReportMetric(mb(int64(allocs)), "js-scrape-alloc-MB")
		b.Logf("scrape of %d series: js %.1f ms, go %.1f ms (%.2f×); heap %.1f → %.1f MB after %d scrapes, RSS %.1f MB; one js scrape allocates %.1f MB",
			seedCount, median(js), median(goc), median(js)/median(goc), mb(heapBefore), mb(heapAfter), scrapeRounds, mb(rss), mb(int64(allocs)))
	}
}

// BenchmarkScriptMetricsLatency: write→handler latency at latencyRate writes a second (the
// event latency benchmark's writer and script) in a runner that also loads the metrics script
// (20,000 series), alternating in short slices (slices_test.go) between no scrape, a scrape
// every second of the script's family (the runner's registry, as /metrics serves it), and a
// scrape every second of the same family from the Go collector over a client-go informer of
// its own in the process: the cost of serving 20,000 series a second without JavaScript.
// $JSINFORMER_LATENCY_ROUNDS (default 20) and $JSINFORMER_SLICE_SECONDS (default 5) set the
// run's shape.
func BenchmarkScriptMetricsLatency(b *testing.B) {
	cp := seeded(b)
	cfg := sliceConfigFromEnv(b, 20, 5*time.Second)
	for range b.N {
		scrapeSlices(b, cp, cfg)
	}
}

func scrapeSlices(b *testing.B, cp *controlplane.ControlPlane, cfg sliceConfig) {
	p := newProbe()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	ns := sliceNamespace(b, cp, "latency-metrics")
	startArrivals(b, ctx, &wg, cp, p)
	tap := newLoadTap(p)
	reg, stop := startRunnerWith(b, cp, map[string]string{"metrics.js": metricsScript, "lat.js": latencyScript(ns)}, slog.New(tap), tap.ready)
	defer stop()
	goReg, stopGo := startGoCollector(b, cp)
	defer stopGo()
	var scrapes, short int
	var scrapeErr error
	scraper := func(reg *prometheus.Registry) func() func() {
		return func() func() {
			sctx, stop := context.WithCancel(ctx)
			var done sync.WaitGroup
			done.Go(func() {
				tick := time.NewTicker(time.Second)
				defer tick.Stop()
				for {
					n, err := scrape(reg)
					scrapes++
					if err != nil {
						scrapeErr = err
					} else if n < seedCount {
						short++
					}
					select {
					case <-sctx.Done():
						return
					case <-tick.C:
					}
				}
			})
			return func() { stop(); done.Wait() }
		}
	}
	cs := []sliceContender{{name: "quiet", ns: ns}, {name: "js", ns: ns, attach: scraper(reg)}, {name: "go", ns: ns, attach: scraper(goReg)}}
	recs := runSlices(b, cp, p, cs, cfg)
	if scrapeErr != nil || short > 0 {
		b.Fatalf("scrapes: %d of %d short, error %v", short, scrapes, scrapeErr)
	}
	b.Logf("%d scrapes of %d series each", scrapes, seedCount)
	reportSlices(b, cs, recs, p, cfg)
}

// startMetricsRunner runs an engine on scripts until stop, returning once it is ready.
func startMetricsRunner(b *testing.B, cp *controlplane.ControlPlane, scripts map[string]string) (*prometheus.Registry, func()) {
	ready := make(chan struct{})
	var once sync.Once
	return startRunnerWith(b, cp, scripts, slog.New(readyTap{ready: ready, once: &once}), ready)
}

func startRunnerWith(b *testing.B, cp *controlplane.ControlPlane, scripts map[string]string, logger *slog.Logger, ready <-chan struct{}) (*prometheus.Registry, func()) {
	b.Helper()
	dir := b.TempDir()
	for name, src := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, Logger: logger, PaceGC: true, Registerer: reg,
		MetricSeriesLimit: 2 * seedCount}) // a series per Deployment: above the default 10,000
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		b.Fatalf("runner stopped before ready: %v", err)
	}
	return reg, func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("runner: %v", err)
		}
	}
}

// readyTap only waits for the engine's "ready".
type readyTap struct {
	ready chan struct{}
	once  *sync.Once
}

func (h readyTap) Enabled(context.Context, slog.Level) bool { return true }
func (h readyTap) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "ready" {
		h.once.Do(func() { close(h.ready) })
	}
	return nil
}
func (h readyTap) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h readyTap) WithGroup(string) slog.Handler      { return h }

// startGoCollector is the yardstick: a client-go dynamic informer on the seeded Deployments
// and a prometheus.Collector serving the same family from its cache.
func startGoCollector(b *testing.B, cp *controlplane.ControlPlane) (*prometheus.Registry, func()) {
	b.Helper()
	inf := clientGoInformer(dynamic.NewForConfigOrDie(cp.Config), benchNamespace, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		b.Fatal("client-go informer did not sync")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&replicasCollector{store: inf.GetStore(),
		desc: prometheus.NewDesc(replicasFamily, "spec.replicas of each Deployment", []string{"namespace", "name"}, nil)})
	return reg, cancel
}

// replicasCollector is what one would write in Go for the same family.
type replicasCollector struct {
	store cache.Store
	desc  *prometheus.Desc
}

func (c *replicasCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *replicasCollector) Collect(ch chan<- prometheus.Metric) {
	for _, obj := range c.store.List() {
		u := obj.(*unstructured.Unstructured)
		replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(replicas), u.GetNamespace(), u.GetName())
	}
}

// scrape is what /metrics does: gather and write the text exposition. It returns the number
// of lines of the family.
func scrape(reg *prometheus.Registry) (int, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			return 0, err
		}
	}
	return strings.Count(buf.String(), "\n"+replicasFamily+"{"), nil
}

// timed is the milliseconds one scrape took; a failed or short scrape fails the benchmark.
func timed(b *testing.B, scrape func() (int, error)) float64 {
	start := time.Now()
	n, err := scrape()
	took := time.Since(start)
	if err != nil || n < seedCount {
		b.Fatalf("scrape: %d series, %v", n, err)
	}
	return ms(took)
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// rssBytes is the process's resident set size now (VmRSS).
func rssBytes(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}
