package bench

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"one", []float64{3}, 3},
		{"odd unsorted", []float64{9, 1, 5}, 5},
		{"even takes the mean of the middle pair", []float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := median(tt.in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing should be NaN")
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = float64(20 - i) // 20 .. 1, unsorted on purpose
	}
	tests := []struct {
		name string
		p    float64
		want float64
	}{
		{"p50 of 1..20 is the 10th", 50, 10},
		{"p99 of 20 samples is the maximum", 99, 20},
		{"p95 of 20 samples is the 19th", 95, 19},
		{"tiny p is the minimum", 0.1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := percentile(twenty, tt.p); got != tt.want {
				t.Errorf("percentile(p%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

// TestBucketQuantile: quantiles of cumulative buckets interpolate within their bucket, as
// PromQL's histogram_quantile does.
func TestBucketQuantile(t *testing.T) {
	t.Parallel()
	h := bucketCounts{le: []float64{1, 2, 4, math.Inf(1)}, counts: []float64{10, 30, 40, 40}}
	tests := []struct {
		name string
		h    bucketCounts
		q    float64
		want float64
	}{
		{"first bucket from zero", h, 0.1, 0.4},
		{"middle of the second", h, 0.5, 1.5},
		{"near the top of the third", h, 0.99, 3.92},
		{"in +Inf: the largest finite bound", bucketCounts{le: h.le, counts: []float64{10, 30, 40, 50}}, 0.99, 4},
		{"no observations", bucketCounts{le: h.le, counts: []float64{0, 0, 0, 0}}, 0.5, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.h.quantile(tt.q)
			if math.IsNaN(tt.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tt.want) > 1e-9) {
				t.Errorf("quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
	// Slices' deltas summed are the histogram of the whole.
	sum := sumBuckets([]bucketCounts{h.minus(bucketCounts{}), {le: h.le, counts: []float64{0, 10, 10, 10}}})
	if got := sum.counts; got[1] != 40 || got[3] != 50 {
		t.Errorf("summed counts %v, want [10 40 50 50]", got)
	}
}
