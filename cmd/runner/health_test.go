package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestReadyzFollowsTheEngine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ready    func() error
		wantCode int
		wantBody string
	}{
		{"before the engine", nil, http.StatusServiceUnavailable, "starting"},
		{"ready", func() error { return nil }, http.StatusOK, "ok"},
		{"informer down", func() error {
			return errors.New("not ready: informer v1/configmaps cannot list/watch for 31s (scripts a.js)")
		},
			http.StatusServiceUnavailable, "informer v1/configmaps cannot list/watch for 31s (scripts a.js)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHealth()
			if tt.ready != nil {
				h.setReadiness(tt.ready)
			}
			mux := h.mux(prometheus.NewRegistry())
			for path, code := range map[string]int{"/readyz": tt.wantCode, "/healthz": http.StatusOK} {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != code {
					t.Errorf("%s = %d, want %d", path, rec.Code, code)
				}
				if path == "/readyz" && !strings.Contains(rec.Body.String(), tt.wantBody) {
					t.Errorf("/readyz body %q, want %q", rec.Body.String(), tt.wantBody)
				}
			}
		})
	}
}
