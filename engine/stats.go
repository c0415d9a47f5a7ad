package engine

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/scripting"
)

// stats are the engine's Prometheus metrics. A nil Registerer in Config keeps them private.
type stats struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	loads    *prometheus.CounterVec
	versions prometheus.Gauge
	backlog  *backlog
}

func newStats(reg prometheus.Registerer) *stats {
	s := &stats{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_handler_calls_total",
			Help: "Calls of the handlers a script defines, by script, handler and result (ok, error, timeout).",
		}, []string{"script", "handler", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "jsinformer_handler_duration_seconds",
			Help:    "Script handler call duration.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 4, 10),
		}, []string{"script", "handler"}),
		loads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_script_loads_total",
			Help: "Script loads by result (loaded, reloaded, failed, unloaded).",
		}, []string{"script", "result"}),
		versions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "jsinformer_script_versions",
			Help: "Script versions alive, including ones syncing or draining.",
		}),
		backlog: newBacklog(),
	}
	if reg != nil {
		reg.MustRegister(s.calls, s.duration, s.loads, s.versions, s.backlog)
	}
	return s
}

func (s *stats) observe(script, handler string, d time.Duration, err error) {
	s.calls.WithLabelValues(script, handler, resultOf(err)).Inc()
	s.duration.WithLabelValues(script, handler).Observe(d.Seconds())
}

func resultOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, scripting.ErrTimeout):
		return "timeout"
	default:
		return "error"
	}
}
