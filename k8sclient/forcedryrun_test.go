package k8sclient_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jsinformer/jsinformer/k8sclient"
)

// roundTripFunc records the request it is sent.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestForcedDryRunTransportMarksOnlyMarkedWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		forced bool
		want   string // the query the next transport sees
	}{
		{"marked write gets dryRun=All", http.MethodPost, true, "dryRun=All&fieldManager=x"},
		{"marked patch gets dryRun=All", http.MethodPatch, true, "dryRun=All&fieldManager=x"},
		{"unmarked write passes unchanged", http.MethodPut, false, "fieldManager=x"},
		{"marked read passes unchanged", http.MethodGet, true, "fieldManager=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got string
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = r.URL.RawQuery
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			})
			ctx := t.Context()
			if tt.forced {
				ctx = k8sclient.WithForcedDryRun(ctx)
			}
			req := httptest.NewRequestWithContext(ctx, tt.method, "https://api/api/v1/namespaces/a/configmaps?fieldManager=x", http.NoBody)
			resp, err := k8sclient.ForcedDryRunTransport(next).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if got != tt.want {
				t.Errorf("next saw query %q, want %q", got, tt.want)
			}
			if req.URL.RawQuery != "fieldManager=x" {
				t.Errorf("the caller's request was modified: %q", req.URL.RawQuery)
			}
		})
	}
}
