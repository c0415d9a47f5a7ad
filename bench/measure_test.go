package bench

import (
	"math"
	"runtime"
	"slices"
	"time"
)

// sample is one measured initial sync.
type sample struct {
	elapsed time.Duration
	heap    int64 // live heap bytes held after the sync, above the baseline
}

// liveHeap is the heap still reachable: HeapAlloc right after two full collections (the
// second one frees what the first one's finalizers released).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// median of xs; the mean of the two middle values for an even count.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of xs: the smallest value with
// at least p% of the samples at or below it. With 25 samples p99 is the maximum.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// series collects the samples of one contender across rounds.
type series struct {
	ms, mb []float64
}

func (s *series) add(x sample) {
	s.ms = append(s.ms, ms(x.elapsed))
	s.mb = append(s.mb, mb(x.heap))
}
