package main

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// health answers /healthz (the process serves HTTP: a liveness probe must not restart a runner
// because the API server is down) and /readyz (the engine's Ready: initial scripts synced,
// every informer they need able to list and watch).
type health struct {
	ready atomic.Pointer[func() error]
}

func newHealth() *health { return &health{} }

// setReadiness installs the engine's readiness check; until then /readyz answers 503.
func (h *health) setReadiness(ready func() error) { h.ready.Store(&ready) }

func (h *health) mux(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", h.serveReady)
	return mux
}

func (h *health) serveReady(w http.ResponseWriter, _ *http.Request) {
	ready := h.ready.Load()
	if ready == nil {
		http.Error(w, "not ready: starting", http.StatusServiceUnavailable)
		return
	}
	if err := (*ready)(); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok"))
}
