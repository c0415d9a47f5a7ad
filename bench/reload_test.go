package bench

import (
	"fmt"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// reloadsPerIteration is how many reloads one benchmark iteration measures.
const reloadsPerIteration = 30

// reloadTimeout bounds one reload; far above the target, it only turns a hang into a failure.
const reloadTimeout = time.Minute

// indexers alternate between reloads, so each new version computes a different index.
var indexers = []string{
	`byImage: (d) => d.spec.template.spec.containers.map((c) => c.image)`,
	`byTeam: (d) => [d.metadata.labels.team + "/" + d.metadata.labels.tier]`,
}

// reloadScript is content number i of the reloaded script: always a new version.
func reloadScript(i int) string {
	return fmt.Sprintf(`// version %d
let n = 0;
export default {
  watch: { resource: "apps/v1/deployments", namespace: "bench" },
  indexers: { %s },
  onAdd(d, ctx) { n++; },
  onUpdate(oldD, newD, ctx) {},
};
`, i, indexers[i%len(indexers)])
}

// BenchmarkReload measures hot-reload latency with the seeded Deployments cached: from just
// before the script file is rewritten until the engine logs "script reloaded" for the new
// version. That includes the default 50 ms debounce, compiling, the new version's onAdd and
// index function for every cached object, and retiring the old version.
//
// back-to-back writes the next content as soon as the previous reload is reported, the worst
// case for the garbage collector: the runner is never idle. paced leaves reloadPause between
// reloads, as a person saving a file or a ConfigMap update would.
func BenchmarkReload(b *testing.B) {
	cp := seeded(b)
	for _, pace := range []struct {
		name  string
		pause time.Duration
	}{{"back-to-back", 0}, {"paced", reloadPause}} {
		b.Run(pace.name, func(b *testing.B) { benchmarkReload(b, cp, pace.pause) })
	}
}

// reloadPause is the gap between paced reloads.
const reloadPause = 500 * time.Millisecond

func benchmarkReload(b *testing.B, cp *controlplane.ControlPlane, pause time.Duration) {
	dir := b.TempDir()
	writeScript(b, dir, "indexed.js", reloadScript(0))
	r := newRunner(b, cp, dir)
	r.start()
	defer r.stop(b)
	r.waitReady(b)
	var latencies []float64
	next := 1
	cycles := gcCycles()
	for b.Loop() {
		for range reloadsPerIteration {
			time.Sleep(pause) // the gap itself is not measured: latency runs from the write
			latencies = append(latencies, ms(reloadOnce(b, r, dir, next)))
			next++
		}
	}
	b.Logf("reload latencies (ms): %.0f", latencies)
	b.ReportMetric(percentile(latencies, 50), "p50-ms")
	b.ReportMetric(percentile(latencies, 99), "p99-ms")
	b.ReportMetric(float64(len(latencies)), "reloads")
	b.ReportMetric(float64(gcCycles()-cycles)/float64(len(latencies)), "gc/reload")
}

// gcCycles is the number of completed garbage-collection cycles, forced ones included.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// reloadOnce writes content number i and waits for the engine to report it reloaded.
func reloadOnce(b *testing.B, r *runner, dir string, i int) time.Duration {
	b.Helper()
	content := reloadScript(i)
	reloaded := r.tap.expectReload(scriptVersion(content))
	start := time.Now()
	writeScript(b, dir, "indexed.js", content)
	if err := waitClosed(reloadTimeout, reloaded); err != nil {
		b.Fatalf("reload %d (version %s): %v\n%s", i, scriptVersion(content), err, r.tap.problems())
	}
	return time.Since(start)
}
