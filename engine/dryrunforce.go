package engine

import (
	"context"
	"net/http"
)

// A replay with --dry-run sends the handler's writes with dryRun=All whatever --dry-run says.
// The k8s client the script holds cannot be swapped for one call, so the call's context
// carries the wish (tapClient marks it) and the transport of every client the engine builds
// adds the parameter to the requests that carry it.

type forceDryRunKey struct{}

func withForcedDryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, forceDryRunKey{}, true)
}

// dryRunTransport adds dryRun=All to writes whose context asks for it.
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
