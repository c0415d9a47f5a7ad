package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// reportSlices summarizes an alternating run: a line per contender in the log and its figures
// as benchmark metrics (name-p99-ms, name-p99-hi-ms, ...; the d… metrics are against the first
// contender, the baseline). It fails the benchmark only when the run did not measure what it
// claims: a contender with almost no samples, or a write the runner never handled.
func reportSlices(b *testing.B, cs []sliceContender, recs []sliceRecord, p *probe, cfg sliceConfig) []contenderStats {
	ws, missing := writesOf(p, recs)
	if missing > 0 {
		b.Errorf("%d writes were never handled by the runner", missing)
	}
	stats := summarize(ws, len(cs), cfg.rounds)
	logRounds(b, cs, recs, ws, cfg.rounds)
	for i, c := range cs {
		s := stats[i]
		if s.n < latencyRate*int(cfg.slice/time.Second)*cfg.rounds/10 {
			b.Fatalf("%s: only %d writes timed", c.name, s.n)
		}
		m := machineOf(recs, i)
		b.Logf("%-8s %6d writes, %3.0f/s | p50 %6.2f [%6.2f, %6.2f] | p99 %7.2f [%7.2f, %7.2f] | Δp50 %+6.2f [%+6.2f, %+6.2f] | Δp99 %+7.2f [%+7.2f, %+7.2f] ms",
			c.name, s.n, m.rate, s.p50.est, s.p50.lo, s.p50.hi, s.p99.est, s.p99.lo, s.p99.hi,
			s.diffP50.est, s.diffP50.lo, s.diffP50.hi, s.diffP99.est, s.diffP99.lo, s.diffP99.hi)
		b.Logf("%-8s arrival (client-go) p50 %.2f p99 %.2f | runner's own share p50 %.2f p99 %.2f [%.2f, %.2f] Δp99 %+.2f [%+.2f, %+.2f] | PATCH returned p99 %.2f | slowest 1 %%: %.0f %% of their time before arrival, GC ended during %.0f %% of them (%.0f %% of all) | %d arrivals missed",
			c.name, s.arrivalP50, s.arrivalP99, s.ownP50, s.ownP99.est, s.ownP99.lo, s.ownP99.hi, s.diffOwnP99.est, s.diffOwnP99.lo, s.diffOwnP99.hi, s.returnedP99, 100*s.tailArrivalShare, 100*s.tailGC, 100*s.allGC, s.missedArrival)
		b.Logf("%-8s machine: load %.1f–%.1f (median %.1f), CPU stalled %.0f %% of the time, process %.2f cores, %.1f GCs/s, GC pauses %.2f ms/s, goroutine scheduling p99 %.2f ms (slice medians)",
			c.name, m.loadMin, m.loadMax, m.loadMed, m.stalled, m.cores, m.gcPerS, m.pausePerS, m.schedP99)
		b.ReportMetric(s.p50.est, c.name+"-p50-ms")
		b.ReportMetric(s.p99.est, c.name+"-p99-ms")
		b.ReportMetric(s.ownP99.est, c.name+"-own-p99-ms")
		b.ReportMetric(m.rate, c.name+"-writes/s")
		if i > 0 {
			b.ReportMetric(s.diffP99.est, c.name+"-dp99-ms")
			b.ReportMetric(s.diffP99.lo, c.name+"-dp99-lo-ms")
			b.ReportMetric(s.diffP99.hi, c.name+"-dp99-hi-ms")
			b.ReportMetric(s.diffOwnP99.est, c.name+"-own-dp99-ms")
		}
	}
	return stats
}

// machine is the state of the machine over one contender's measured slices.
type machine struct {
	rate                      float64 // writes sent per second of slice
	loadMin, loadMed, loadMax float64
	stalled, cores            float64 // slice medians
	gcPerS, pausePerS         float64 // over all the slices
	schedP99                  float64 // slice median
}

func machineOf(recs []sliceRecord, c int) machine {
	var m machine
	var loads, stalled, cores, sched []float64
	var sent, gcs int
	var pause, wall, procWall float64
	for _, r := range recs {
		if r.contender != c || r.round < 0 {
			continue
		}
		sec := float64(r.end-r.start) / 1e9
		sent += r.sent
		wall += sec
		procWall += r.proc.seconds
		gcs += r.proc.gcs
		pause += r.proc.gcPauseMs
		loads = append(loads, r.proc.load1)
		stalled = append(stalled, r.proc.stalledPct)
		cores = append(cores, r.proc.cpuCores)
		sched = append(sched, r.proc.schedP99Ms)
	}
	if wall == 0 {
		return m
	}
	m.rate = float64(sent) / wall
	m.loadMin, m.loadMax, m.loadMed = slices.Min(loads), slices.Max(loads), median(loads)
	m.stalled, m.cores, m.schedP99 = median(stalled), median(cores), median(sched)
	m.gcPerS, m.pausePerS = float64(gcs)/procWall, pause/procWall
	return m
}

// logRounds logs each round's p99s per contender (write→handler, and the runner's own share),
// with the load at the round's end: whether a contender's figure rests on one bad round.
func logRounds(b *testing.B, cs []sliceContender, recs []sliceRecord, ws []timedWrite, rounds int) {
	total := make([][][]float64, rounds)
	own := make([][][]float64, rounds)
	for r := range rounds {
		total[r], own[r] = make([][]float64, len(cs)), make([][]float64, len(cs))
	}
	for _, w := range ws {
		total[w.round][w.contender] = append(total[w.round][w.contender], w.total)
		if !math.IsNaN(w.arrival) {
			own[w.round][w.contender] = append(own[w.round][w.contender], w.total-w.arrival)
		}
	}
	load := make([]float64, rounds)
	for _, rec := range recs {
		if rec.round >= 0 {
			load[rec.round] = rec.proc.load1
		}
	}
	for r := range rounds {
		var line strings.Builder
		for c, cn := range cs {
			fmt.Fprintf(&line, " | %s %7.2f own %6.2f", cn.name, percentile(total[r][c], 99), percentile(own[r][c], 99))
		}
		b.Logf("round %2d, load %4.1f, p99 (ms)%s", r, load[r], line.String())
	}
}
