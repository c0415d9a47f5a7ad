package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// The statistics of an alternating run: per contender, the pooled p50 and p99 of the
// write→handler latency with 95 % confidence intervals, and of each contender's difference
// from the first (the baseline). Samples of one slice are not independent (a stall delays
// every write in flight), so the intervals come from a bootstrap over rounds: a resample
// draws whole rounds with replacement and pools every contender's samples of the drawn
// rounds, keeping the pairing of contenders that shared a round's machine.

// timedWrite is one write's times, in ms from its stamp.
type timedWrite struct {
	contender, round int
	total            float64 // stamp → runner handler
	arrival          float64 // stamp → client-go handler (NaN if client-go missed it)
	returned         float64 // stamp → PATCH response
	gcDuring         bool    // a garbage collection ended between stamp and handler
}

// writesOf joins the probe's times into timed writes, each in the slice it was sent in; the
// warm-up round is left out.
func writesOf(p *probe, recs []sliceRecord) (ws []timedWrite, missing int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var gcEnds []int64
	for _, r := range recs {
		gcEnds = append(gcEnds, r.proc.gcEnds...)
	}
	slices.Sort(gcEnds)
	for k, sent := range p.sent {
		i := sort.Search(len(recs), func(i int) bool { return recs[i].end >= sent })
		if i == len(recs) || recs[i].start > sent || recs[i].round < 0 {
			continue
		}
		handled, ok := p.handled[k]
		if !ok {
			missing++
			continue
		}
		w := timedWrite{contender: recs[i].contender, round: recs[i].round, total: msBetween(sent, handled),
			returned: msBetween(sent, p.returned[k]), arrival: math.NaN()}
		if a, ok := p.arrived[k]; ok {
			w.arrival = msBetween(sent, a)
		}
		j, _ := slices.BinarySearch(gcEnds, sent)
		w.gcDuring = j < len(gcEnds) && gcEnds[j] <= handled
		ws = append(ws, w)
	}
	return ws, missing
}

func msBetween(from, to int64) float64 { return float64(to-from) / 1e6 }

// For the bootstrap, values are binned; pooling resampled rounds then adds bin counts instead
// of sorting samples. Latencies go in log-scale bins 0.25 % wide (0.1 ms at 40 ms) from 0.05
// ms to ~100 s; the runner's own share (which is negative when the runner's handler ran before
// client-go's) in 0.05 ms bins from −20 to +280 ms, clamped.
type binning struct {
	lo, step float64 // log: lo and the ratio between bins; linear: lo and the width
	n        int
	log      bool
}

var (
	latencyBins = binning{lo: 0.05, step: 1.0025, n: 5800, log: true}
	ownBins     = binning{lo: -20, step: 0.05, n: 6000}
)

func (bn binning) bin(v float64) int {
	var i int
	if bn.log {
		if v <= bn.lo {
			return 0
		}
		i = int(math.Log(v/bn.lo) / math.Log(bn.step))
	} else {
		i = int(math.Floor((v - bn.lo) / bn.step))
	}
	return min(max(i, 0), bn.n-1)
}

// value is the middle of bin i.
func (bn binning) value(i int) float64 {
	if bn.log {
		return bn.lo * math.Pow(bn.step, float64(i)+0.5)
	}
	return bn.lo + bn.step*(float64(i)+0.5)
}

// histQuantile is the nearest-rank quantile p (percent) of the pooled counts.
func (bn binning) quantile(h []int, n int, p float64) float64 {
	rank := max(int(math.Ceil(p/100*float64(n))), 1)
	seen := 0
	for i, c := range h {
		if seen += c; seen >= rank {
			return bn.value(i)
		}
	}
	return math.NaN()
}

// roundHists bins each contender's values by round: [contender][round][bin], and counts.
func roundHists(bn binning, contenders, rounds int, each func(yield func(c, r int, v float64))) ([][][]int, [][]int) {
	hists := make([][][]int, contenders)
	counts := make([][]int, contenders)
	for c := range contenders {
		hists[c] = make([][]int, rounds)
		counts[c] = make([]int, rounds)
		for r := range rounds {
			hists[c][r] = make([]int, bn.n)
		}
	}
	each(func(c, r int, v float64) {
		hists[c][r][bn.bin(v)]++
		counts[c][r]++
	})
	return hists, counts
}

// bootstrap draws resamples of whole rounds (the same draw for every contender) and returns,
// per contender, the resampled quantiles ps: [contender][quantile][resample].
func bootstrap(bn binning, hists [][][]int, counts [][]int, ps []float64) [][][]float64 {
	contenders, rounds := len(hists), len(hists[0])
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][][]float64, contenders)
	for c := range out {
		out[c] = make([][]float64, len(ps))
	}
	pooled := make([]int, bn.n)
	pick := make([]int, rounds)
	for range bootstrapResamples {
		for i := range pick {
			pick[i] = rng.IntN(rounds)
		}
		for c := range contenders {
			clear(pooled)
			n := 0
			for _, r := range pick {
				for i, v := range hists[c][r] {
					pooled[i] += v
				}
				n += counts[c][r]
			}
			for q, p := range ps {
				out[c][q] = append(out[c][q], bn.quantile(pooled, n, p))
			}
		}
	}
	return out
}

// interval is a point estimate and its 95 % bootstrap interval.
type interval struct{ est, lo, hi float64 }

// contenderStats is one contender's summary; diff fields are against the baseline (contender
// 0) and zero for the baseline itself.
type contenderStats struct {
	n                  int
	p50, p99           interval
	diffP50, diffP99   interval
	arrivalP50         float64 // p50 of stamp → client-go handler
	arrivalP99         float64
	ownP50             float64  // p50 of (runner handler − client-go handler)
	ownP99, diffOwnP99 interval // its p99, and the difference from the baseline's
	returnedP99        float64  // p99 of stamp → PATCH response
	tailArrivalShare   float64  // median share of arrival in total, over samples above p99
	tailGC, allGC      float64  // share of samples above p99 (of all samples) during which a GC ended
	missedArrival      int      // writes client-go never reported (excluded from the arrival figures)
}

const bootstrapResamples = 2000

// summarize computes every contender's stats from ws, with rounds measured rounds.
func summarize(ws []timedWrite, contenders, rounds int) []contenderStats {
	totals := make([][]float64, contenders)
	owns := make([][]float64, contenders)
	for _, w := range ws {
		totals[w.contender] = append(totals[w.contender], w.total)
		if !math.IsNaN(w.arrival) {
			owns[w.contender] = append(owns[w.contender], w.total-w.arrival)
		}
	}
	hists, counts := roundHists(latencyBins, contenders, rounds, func(yield func(c, r int, v float64)) {
		for _, w := range ws {
			yield(w.contender, w.round, w.total)
		}
	})
	boot := bootstrap(latencyBins, hists, counts, []float64{50, 99})
	hists, counts = roundHists(ownBins, contenders, rounds, func(yield func(c, r int, v float64)) {
		for _, w := range ws {
			if !math.IsNaN(w.arrival) {
				yield(w.contender, w.round, w.total-w.arrival)
			}
		}
	})
	ownBoot := bootstrap(ownBins, hists, counts, []float64{99})
	out := make([]contenderStats, contenders)
	for c := range contenders {
		s := &out[c]
		s.n = len(totals[c])
		s.p50 = withCI(percentile(totals[c], 50), boot[c][0])
		s.p99 = withCI(percentile(totals[c], 99), boot[c][1])
		s.ownP99 = withCI(percentile(owns[c], 99), ownBoot[c][0])
		if c > 0 {
			s.diffP50 = withCI(s.p50.est-out[0].p50.est, diffs(boot[c][0], boot[0][0]))
			s.diffP99 = withCI(s.p99.est-out[0].p99.est, diffs(boot[c][1], boot[0][1]))
			s.diffOwnP99 = withCI(s.ownP99.est-out[0].ownP99.est, diffs(ownBoot[c][0], ownBoot[0][0]))
		}
		describeTail(s, ws, c)
	}
	return out
}

func diffs(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

// withCI is est with the 2.5th and 97.5th percentiles of its bootstrap resamples.
func withCI(est float64, resamples []float64) interval {
	return interval{est: est, lo: percentile(resamples, 2.5), hi: percentile(resamples, 97.5)}
}

// describeTail fills where contender c's time goes: arrival in the process vs the runner's
// own share, and how the slowest 1 % differ from the rest.
func describeTail(s *contenderStats, ws []timedWrite, c int) {
	var arrival, own, returned, tailShare []float64
	var gcAll, gcTail, nTail int
	for _, w := range ws {
		if w.contender != c {
			continue
		}
		returned = append(returned, w.returned)
		if w.gcDuring {
			gcAll++
		}
		if math.IsNaN(w.arrival) {
			s.missedArrival++
		} else {
			arrival = append(arrival, w.arrival)
			own = append(own, w.total-w.arrival)
		}
		if w.total > s.p99.est {
			nTail++
			if w.gcDuring {
				gcTail++
			}
			if !math.IsNaN(w.arrival) {
				tailShare = append(tailShare, w.arrival/w.total)
			}
		}
	}
	s.arrivalP50, s.arrivalP99 = percentile(arrival, 50), percentile(arrival, 99)
	s.ownP50 = percentile(own, 50)
	s.returnedP99 = percentile(returned, 99)
	s.tailArrivalShare = median(tailShare)
	if s.n > 0 {
		s.allGC = float64(gcAll) / float64(s.n)
	}
	if nTail > 0 {
		s.tailGC = float64(gcTail) / float64(nTail)
	}
}
