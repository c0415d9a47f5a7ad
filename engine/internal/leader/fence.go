package leader

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrNotLeader is wrapped by the error of a write refused because this runner does not hold
// its Lease.
var ErrNotLeader = errors.New("not the leader")

// ErrLost is what a runner that stopped leading without being asked to returns.
var ErrLost = errors.New("leadership lost")

// Fence wraps next so that it refuses every request but reads while valid reports false: the
// last line of defence, should a script call survive a lost Lease. valid is an Elector's
// Valid, or a shard member's; it is called on the request's goroutine.
func Fence(next http.RoundTripper, valid func() bool) http.RoundTripper {
	return fencedTransport{next: next, valid: valid}
}

type fencedTransport struct {
	next  http.RoundTripper
	valid func() bool
}

func (t fencedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && !t.valid() {
		return nil, fmt.Errorf("refuse %s %s: %w: this runner does not hold its Lease", req.Method, req.URL.Path, ErrNotLeader)
	}
	return t.next.RoundTrip(req)
}
