package trace

import (
	"errors"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// Finish sets what a call of handler did on r: how long it took and its result (ok, error,
// timeout); nil-safe.
func Finish(r *inspection.TraceRecord, handler string, took time.Duration, err error) {
	if r == nil {
		return
	}
	r.Handler, r.DurationMs, r.Result = handler, float64(took.Microseconds())/1000, "ok"
	switch {
	case errors.Is(err, scripting.ErrTimeout):
		r.Result, r.Error = "timeout", err.Error()
	case err != nil:
		r.Result, r.Error = "error", err.Error()
	}
}
