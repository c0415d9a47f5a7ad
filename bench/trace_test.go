package bench

import (
	"bufio"
	"context"
	"log/slog"
	"math/rand/v2"
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
//     BenchmarkEventLatency measures it, for in-process runners with recording off, on, and
//     on with a tail client attached to the debug API (an HTTP server-sent-events reader),
//     alternating in short slices (slices_test.go); $JSINFORMER_LATENCY_ROUNDS (default 20)
//     and $JSINFORMER_SLICE_SECONDS (default 5) set the run's shape.

func BenchmarkTraceInitialSync(b *testing.B) {
	runner := deployedCopy(b, buildRunner(b))
	processes := []process{
		{"trace-on", runnerCommand(runner), false},
		{"trace-off", runnerCommand(runner, "--trace-records", "0"), false},
	}
	cp := seededShape(b, realistic)
	results := runProcessRounds(b, cp, realistic, processes)
	for _, m := range []struct {
		name    string
		on, off []float64
	}{{"time", results[0].ms, results[1].ms}, {"rss", results[0].mb, results[1].mb}} {
		ci := ratioCI(m.on, m.off)
		b.ReportMetric(ci.est, m.name+"-ratio-on-vs-off")
		b.ReportMetric(ci.lo, m.name+"-ratio-lo")
		b.ReportMetric(ci.hi, m.name+"-ratio-hi")
	}
}

// ratioCI is the ratio of the medians of on and off, rounds paired as run, with a 95 %
// bootstrap interval over resampled rounds.
func ratioCI(on, off []float64) interval {
	rng := rand.New(rand.NewPCG(1, 2))
	resamples := make([]float64, 2000)
	a, b := make([]float64, len(on)), make([]float64, len(off))
	for i := range resamples {
		for j := range a {
			k := rng.IntN(len(on))
			a[j], b[j] = on[k], off[k]
		}
		resamples[i] = median(a) / median(b)
	}
	return withCI(median(on)/median(off), resamples)
}

func BenchmarkTraceLatency(b *testing.B) {
	cp := controlplane.Require(b, env)
	cfg := sliceConfigFromEnv(b, 20, 5*time.Second)
	for range b.N {
		traceSlices(b, cp, cfg)
	}
}

// traceSlices is one alternating run (slices_test.go): two runners in this process, recording
// off and on, each handling a namespace of its own; the writer writes to one of them per
// slice; the on runner serves its debug API, to which a tail client is attached for the
// on-tail slices only.
func traceSlices(b *testing.B, cp *controlplane.ControlPlane, cfg sliceConfig) {
	p := newProbe()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	nsOff, nsOn := sliceNamespace(b, cp, "trace-off"), sliceNamespace(b, cp, "trace-on")
	startArrivals(b, ctx, &wg, cp, p)
	startTracedRunner(b, ctx, &wg, cp, p, nsOff, -1)
	on := startTracedRunner(b, ctx, &wg, cp, p, nsOn, 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := debugapi.New(debugapi.Options{Source: on, Loopback: true})
	wg.Go(func() { _ = srv.Serve(ctx, l) })
	var tailed atomic.Int64
	attachTail := func() func() {
		tctx, stop := context.WithCancel(ctx)
		var tails sync.WaitGroup
		startTail(b, tctx, &tails, "http://"+l.Addr().String()+"/debug/tail", &tailed)
		return func() { stop(); tails.Wait() }
	}
	cs := []sliceContender{{name: "off", ns: nsOff}, {name: "on", ns: nsOn}, {name: "on-tail", ns: nsOn, attach: attachTail}}
	recs := runSlices(b, cp, p, cs, cfg)
	tailWrites := 0
	for _, r := range recs {
		if r.contender == 2 {
			tailWrites += r.sent
		}
	}
	if tailed.Load() < int64(tailWrites)/2 {
		b.Fatalf("the tail client read %d records during slices of %d writes", tailed.Load(), tailWrites)
	}
	b.Logf("the tail client read %d records during slices of %d writes", tailed.Load(), tailWrites)
	reportSlices(b, cs, recs, p, cfg)
}

// startTracedRunner runs an engine with Config.TraceRecords records on the latency script of
// ns until ctx ends, returning once it is ready.
func startTracedRunner(b *testing.B, ctx context.Context, wg *sync.WaitGroup, cp *controlplane.ControlPlane, p *probe, ns string, records int) *engine.Engine {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lat.js"), []byte(latencyScript(ns)), 0o644); err != nil {
		b.Fatal(err)
	}
	tap := newLoadTap(p)
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, Logger: slog.New(tap), PaceGC: true, TraceRecords: records})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		if err := e.Run(ctx); err != nil {
			b.Errorf("runner: %v", err)
		}
	})
	select {
	case <-tap.ready:
	case <-done:
		b.Fatal("the runner stopped before it was ready")
	}
	return e
}

// startTail reads url (a debug API's /debug/tail) over HTTP, counting records, until ctx
// ends; its goroutine joins wg.
func startTail(b *testing.B, ctx context.Context, wg *sync.WaitGroup, url string, tailed *atomic.Int64) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
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
