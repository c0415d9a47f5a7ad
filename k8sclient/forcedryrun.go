package k8sclient

import (
	"context"
	"net/http"
)

// A replay with --dry-run sends the handler's writes with dryRun=All whatever Options.DryRun
// says. The client a script holds cannot be swapped for one call, so the call's context
// carries the wish (WithForcedDryRun) and the transport of every client the engine builds
// (ForcedDryRunTransport) adds the parameter to the requests that carry it.

type forceDryRunKey struct{}

// WithForcedDryRun marks ctx: a write sent with it through a transport wrapped by
// ForcedDryRunTransport goes with dryRun=All.
func WithForcedDryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, forceDryRunKey{}, true)
}

// ForcedDryRunTransport wraps next (a rest.Config's Wrap): writes whose context
// WithForcedDryRun marked get dryRun=All; reads and unmarked writes pass unchanged. It never
// modifies the request it is given (it sends a clone).
func ForcedDryRunTransport(next http.RoundTripper) http.RoundTripper {
	return dryRunTransport{next: next}
}

type dryRunTransport struct{ next http.RoundTripper }

func (t dryRunTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Context().Value(forceDryRunKey{}) == nil {
		return t.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	q := req.URL.Query()
	q.Set("dryRun", "All")
	req.URL.RawQuery = q.Encode()
	return t.next.RoundTrip(req)
}
