package dynamicinformer

import (
	"math/rand/v2"
	"time"
)

// Backoff paces an informer's retries of a failing list or watch. Each delay doubles from
// Initial up to Max and is drawn uniformly from its upper half, so many runners retrying
// against one recovering apiserver spread out instead of arriving in step, while the longest
// wait between two attempts stays Max.
//
// client-go's reflector backs off up to 30 s (60 s with its jitter) and resets only after two
// quiet minutes, which leaves a runner blind for up to a minute after an apiserver comes back.
// The Factory retries transient failures itself with this backoff, so the reflector never
// sees them and its backoff never grows.
type Backoff struct {
	// Initial is the first delay; default 250ms.
	Initial time.Duration
	// Max caps the delay for an unreachable or failing server (network errors, 5xx, 429);
	// default 2s, so events flow again within about Max of the server answering.
	Max time.Duration
	// MaxRejected caps the delay for answers that will not change by themselves (401, 403,
	// 404: credentials, RBAC, a resource removed); default 10s.
	MaxRejected time.Duration
}

// DefaultBackoff is the Backoff of a Factory whose Options leave it zero.
var DefaultBackoff = Backoff{Initial: 250 * time.Millisecond, Max: 2 * time.Second, MaxRejected: 10 * time.Second}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoff.Initial
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoff.Max
	}
	if b.MaxRejected <= 0 {
		b.MaxRejected = DefaultBackoff.MaxRejected
	}
	return b
}

// delay is the wait before retry number attempt (0-based) with the given cap.
func (b Backoff) delay(attempt int, limit time.Duration) time.Duration {
	d := b.Initial
	for i := 0; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + rand.N(half+1) //nolint:gosec // jitter, not security
}
