package settle_test

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/jsinformer/jsinformer/engine/internal/settle"
	"github.com/jsinformer/jsinformer/plugins"
)

// The loader's calls, step by step, on one script: a failure of Settling content is held and
// handed back only when that content settles; newer content or a removal drops it; a failure
// of the content last reported comes back marked again.
func TestFailuresHeldUntilTheirContentSettles(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	src := func(hash string, settling bool) plugins.Source {
		return plugins.Source{Name: "a.js", Hash: hash, Settling: settling}
	}
	errBroken := errors.New("broken")
	type step struct {
		do   func(f *settle.Failures) bool // reports what the step returns, if anything
		want bool
	}
	hold := func(hash string, settling bool) step {
		return step{func(f *settle.Failures) bool { return f.Hold(logger, src(hash, settling), errBroken) }, settling}
	}
	settled := func(hash string, want bool) step {
		return step{func(f *settle.Failures) bool {
			h, ok := f.Settled(src(hash, false))
			if ok && (h.Src.Hash != hash || h.Src.Settling || !errors.Is(h.Err, errBroken)) {
				t.Errorf("settled %s: handed back %+v", hash, h)
			}
			return ok
		}, want}
	}
	settledAgain := func(hash string, again bool) step {
		return step{func(f *settle.Failures) bool {
			h, ok := f.Settled(src(hash, false))
			return ok && h.Again
		}, again}
	}
	do := func(fn func(f *settle.Failures)) step {
		return step{func(f *settle.Failures) bool { fn(f); return false }, false}
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"held, then handed back once its content settles", []step{hold("h1", true), settled("h2", false), settled("h1", true), settled("h1", false)}},
		{"not Settling: never held", []step{hold("h1", false), settled("h1", false)}},
		{"superseded by newer content or a removal", []step{hold("h1", true), do(func(f *settle.Failures) { f.Supersede("a.js") }), settled("h1", false)}},
		{"the content last reported fails again", []step{
			hold("h1", true), settledAgain("h1", false),
			do(func(f *settle.Failures) { f.DidReport(src("h1", false)) }),
			hold("h1", true), settledAgain("h1", true),
		}},
		{"forgotten once content loads", []step{
			do(func(f *settle.Failures) { f.DidReport(src("h1", false)) }),
			do(func(f *settle.Failures) { f.Forget("a.js") }),
			hold("h1", true), settledAgain("h1", false),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f settle.Failures
			for i, st := range tt.steps {
				if got := st.do(&f); got != st.want {
					t.Fatalf("step %d = %v, want %v", i, got, st.want)
				}
			}
		})
	}
}
