package leader

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

type okTransport struct{ calls int }

func (t *okTransport) RoundTrip(*http.Request) (*http.Response, error) {
	t.calls++
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// A runner that does not lead sends reads but refuses every write at the transport.
func TestFencedTransportRefusesWritesWhenNotLeading(t *testing.T) {
	t.Parallel()
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		next := &okTransport{}
		rt := Fence(next, (&Elector{}).Valid)
		resp, err := rt.RoundTrip(httptest.NewRequest(method, "https://k8s/api/v1/namespaces/x/configmaps", nil))
		if resp != nil {
			_ = resp.Body.Close()
		}
		if method == http.MethodGet {
			if err != nil || next.calls != 1 {
				t.Errorf("GET: err %v, sent %d; want it sent", err, next.calls)
			}
			continue
		}
		if !errors.Is(err, ErrNotLeader) || next.calls != 0 {
			t.Errorf("%s: err %v, sent %d; want ErrNotLeader and nothing sent", method, err, next.calls)
		}
	}
}

func TestDefaultsAndOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"defaults", Config{Namespace: "ns", Name: "n", Identity: "i"}, false},
		{"renew deadline not below lease", Config{Namespace: "ns", Name: "n", Identity: "i", LeaseDuration: 5 * time.Second, RenewDeadline: 5 * time.Second}, true},
		{"no identity", Config{Namespace: "ns", Name: "n"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := tt.cfg.WithDefaults()
			if (err != nil) != tt.wantErr {
				t.Fatalf("WithDefaults() = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (cfg.LeaseDuration != 15*time.Second || cfg.RenewDeadline != 10*time.Second || cfg.RetryPeriod != 2*time.Second) {
				t.Errorf("defaults = %+v, want kube-controller-manager's 15s/10s/2s", cfg)
			}
		})
	}
}
