package bench

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// The cost of trace recording (engine/internal/trace, docs/debugging.md), in the same run:
//
//   - BenchmarkTraceInitialSync: whole runner processes syncing the seeded Deployments with
//     recording on (the default) and off (--trace-records 0), alternating; wall time and peak
//     RSS ratios (on/off).
//   - BenchmarkTraceLatency: the write→handler latency at latencyRate writes a second, as
//     BenchmarkEventLatency measures it, for the in-process runner with recording off, on, and
//     on with a tail client attached to the debug API (an HTTP server-sent-events reader).

func BenchmarkTraceInitialSync(b *testing.B) {
	runner := deployedCopy(b, buildRunner(b))
	processes := []process{
		{"trace-on", runnerCommand(runner), false},
		{"trace-off", runnerCommand(runner, "--trace-records", "0"), false},
	}
	cp := seededShape(b, realistic)
	results := runProcessRounds(b, cp, realistic, processes)
	b.ReportMetric(median(results[0].ms)/median(results[1].ms), "time-ratio-on-vs-off")
	b.ReportMetric(median(results[0].mb)/median(results[1].mb), "rss-ratio-on-vs-off")
}

func BenchmarkTraceLatency(b *testing.B) {
	cp := controlplane.Require(b, env)
	d := 30 * time.Second
	if s := os.Getenv("JSINFORMER_LATENCY_SECONDS"); s != "" {
		n, err := time.ParseDuration(s + "s")
		if err != nil {
			b.Fatalf("JSINFORMER_LATENCY_SECONDS: %v", err)
		}
		d = n
	}
	for range b.N {
		for _, c := range []struct {
			name    string
			records int
			tail    bool
		}{{"off", -1, false}, {"on", 0, false}, {"on-tail", 0, true}} {
			ns := fmt.Sprintf("trace-%s-%d", c.name, time.Now().UnixNano())
			seedLatency(b, cp, ns)
			lat, tailed := tracedLatency(b, cp, ns, d, c.records, c.tail)
			if len(lat) < latencyRate*int(d/time.Second)/2 {
				b.Fatalf("%s: only %d updates timed", c.name, len(lat))
			}
			if c.tail && tailed < int64(len(lat))/2 {
				b.Fatalf("%s: the tail client read %d records for %d updates", c.name, tailed, len(lat))
			}
			b.ReportMetric(percentile(lat, 50), c.name+"-p50-ms")
			b.ReportMetric(percentile(lat, 99), c.name+"-p99-ms")
			b.Logf("%s: %d updates, p50 %.2f ms, p99 %.2f ms, tail read %d records", c.name, len(lat), percentile(lat, 50), percentile(lat, 99), tailed)
		}
	}
}

// tracedLatency is runnerLatency with Config.TraceRecords set and, with tail, a debug API
// server and a client reading its tail stream; it returns the latencies and how many records
// the tail client read.
func tracedLatency(b *testing.B, cp *controlplane.ControlPlane, ns string, d time.Duration, records int, tail bool) ([]float64, int64) {
	dir := b.TempDir()
	script := `export default { watch: { resource: "v1/configmaps", namespace: "` + ns + `" },
  onUpdate(o, n) { const a = n.metadata.annotations || {}; log.info("lat", { name: n.metadata.name, t: a["bench/t"] || "" }); } };`
	if err := os.WriteFile(filepath.Join(dir, "lat.js"), []byte(script), 0o644); err != nil {
		b.Fatal(err)
	}
	tap := latencyTap{lat: newLatencies(), ready: make(chan struct{}), once: &sync.Once{}}
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, Logger: slog.New(tap), PaceGC: true, TraceRecords: records})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		if err := e.Run(ctx); err != nil {
			b.Errorf("runner: %v", err)
		}
	})
	<-tap.ready
	var tailed atomic.Int64
	if tail {
		startTail(b, ctx, &wg, e, &tailed)
	}
	if err := writeAtRate(cp, ns, d); err != nil {
		b.Fatal(err)
	}
	return tap.lat.wait(b), tailed.Load()
}

// startTail serves e's debug API on a loopback port and reads /debug/tail from it over HTTP,
// counting records, until ctx ends; both goroutines join wg.
func startTail(b *testing.B, ctx context.Context, wg *sync.WaitGroup, e *engine.Engine, tailed *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := debugapi.New(debugapi.Options{Source: e, Loopback: true})
	wg.Go(func() { _ = srv.Serve(ctx, l) })
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+l.Addr().String()+"/debug/tail", nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("open the tail stream: %v %v", err, resp)
	}
	wg.Go(func() {
		defer func() { _ = resp.Body.Close() }()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event: record") {
				tailed.Add(1)
			}
		}
	})
}
