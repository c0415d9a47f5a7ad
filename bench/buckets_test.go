package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A Prometheus histogram as a benchmark reads it from a process's /metrics: the deltas of
// its cumulative buckets over a slice, summed over rounds, and quantiles interpolated within a
// bucket as PromQL's histogram_quantile does.

// bucketCounts is a histogram's cumulative counts by upper bound, +Inf last.
type bucketCounts struct {
	le     []float64
	counts []float64
}

// parseBuckets reads the buckets of the series whose lines start with prefix (up to the le
// label's value) from a Prometheus text exposition.
func parseBuckets(b *testing.B, text, prefix string) bucketCounts {
	b.Helper()
	var h bucketCounts
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		le, count, ok := strings.Cut(rest, `"} `)
		upper, err1 := strconv.ParseFloat(le, 64)
		n, err2 := strconv.ParseFloat(strings.TrimSpace(count), 64)
		if !ok || err1 != nil || err2 != nil {
			b.Fatalf("unreadable bucket %q", line)
		}
		h.le, h.counts = append(h.le, upper), append(h.counts, n)
	}
	return h
}

func (h bucketCounts) count() float64 {
	if len(h.counts) == 0 {
		return 0
	}
	return h.counts[len(h.counts)-1]
}

// minus is h's counts less earlier's (earlier may be empty: no series yet).
func (h bucketCounts) minus(earlier bucketCounts) bucketCounts {
	out := bucketCounts{le: h.le, counts: slices.Clone(h.counts)}
	for i := range earlier.counts {
		out.counts[i] -= earlier.counts[i]
	}
	return out
}

func sumBuckets(hs []bucketCounts) bucketCounts {
	var out bucketCounts
	for _, h := range hs {
		if out.le == nil && h.le != nil {
			out = bucketCounts{le: h.le, counts: make([]float64, len(h.counts))}
		}
		for i := range h.counts {
			out.counts[i] += h.counts[i]
		}
	}
	return out
}

// quantile interpolates the q-quantile within its bucket, as PromQL's histogram_quantile
// does; in the +Inf bucket it is the largest finite bound. NaN without observations.
func (h bucketCounts) quantile(q float64) float64 {
	total := h.count()
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	i, _ := slices.BinarySearch(h.counts, rank)
	if i >= len(h.le)-1 {
		return h.le[len(h.le)-2]
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.le[i-1], h.counts[i-1]
	}
	return lower + (h.le[i]-lower)*(rank-below)/(h.counts[i]-below)
}

// bucketCI is the q-quantile of the rounds' histograms summed, with a 95 % bootstrap
// interval over rounds drawn with replacement.
func bucketCI(rounds []bucketCounts, q float64) interval {
	rng := rand.New(rand.NewPCG(1, 2))
	resamples := make([]float64, bootstrapResamples)
	drawn := make([]bucketCounts, len(rounds))
	for i := range resamples {
		for j := range drawn {
			drawn[j] = rounds[rng.IntN(len(rounds))]
		}
		resamples[i] = sumBuckets(drawn).quantile(q)
	}
	return withCI(sumBuckets(rounds).quantile(q), resamples)
}
