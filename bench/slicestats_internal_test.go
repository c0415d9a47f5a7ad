package bench

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSummarizeIntervals checks the round bootstrap on synthetic rounds whose scale swings
// from round to round (as a shared machine's load does), shared by every contender of a
// round: a contender drawn from the baseline's distribution must get a p99 difference
// interval around zero, one shifted by 5 ms an interval around 5 ms that excludes zero.
func TestSummarizeIntervals(t *testing.T) {
	t.Parallel()
	const rounds, perRound = 20, 800
	rng := rand.New(rand.NewPCG(7, 8))
	var ws []timedWrite
	for r := range rounds {
		scale := 2 + 6*rng.Float64() // this round's machine
		for c, shift := range []float64{0, 0, 5} {
			for range perRound {
				total := 1 + scale*rng.ExpFloat64() + shift
				ws = append(ws, timedWrite{contender: c, round: r, total: total, arrival: total - 0.5})
			}
		}
	}
	stats := summarize(ws, 3, rounds)
	tests := []struct {
		name      string
		c         int
		want      float64
		excludes0 bool
	}{
		{"same distribution", 1, 0, false},
		{"shifted by 5 ms", 2, 5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := stats[tt.c].diffP99
			if d.lo > tt.want || d.hi < tt.want {
				t.Errorf("Δp99 interval [%.2f, %.2f] does not contain %v", d.lo, d.hi, tt.want)
			}
			if tt.excludes0 && d.lo <= 0 {
				t.Errorf("Δp99 interval [%.2f, %.2f] contains 0", d.lo, d.hi)
			}
			if p := stats[tt.c].p99; p.lo > p.est || p.hi < p.est {
				t.Errorf("p99 %.2f outside its interval [%.2f, %.2f]", p.est, p.lo, p.hi)
			}
			if own := stats[tt.c].ownP99; math.Abs(own.est-0.5) > 0.02 || stats[tt.c].diffOwnP99.lo > 0 || stats[tt.c].diffOwnP99.hi < 0 {
				t.Errorf("own share p99 %.3f (Δ [%.3f, %.3f]), want 0.5 and Δ around 0", own.est, stats[tt.c].diffOwnP99.lo, stats[tt.c].diffOwnP99.hi)
			}
		})
	}
}

func TestBinning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bn   binning
		v    float64
		tol  float64 // relative for log bins, absolute for linear
	}{
		{"log, 40 ms", latencyBins, 40, 0.0025},
		{"log, 0.3 ms", latencyBins, 0.3, 0.0025},
		{"linear, negative", ownBins, -1.234, 0.05},
		{"linear, 7 ms", ownBins, 7, 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.bn.value(tt.bn.bin(tt.v))
			err := math.Abs(got - tt.v)
			if tt.bn.log {
				err /= tt.v
			}
			if err > tt.tol {
				t.Errorf("%v lands in a bin valued %v", tt.v, got)
			}
		})
	}
}
