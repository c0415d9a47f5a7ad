package admission

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the admission series: decisions by outcome and the time each took, per script,
// webhook kind and operation. Observe is Config.Observe; safe from any goroutine.
type Metrics struct {
	decisions *prometheus.CounterVec
	duration  *prometheus.HistogramVec
}

// NewMetrics registers the admission series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_admission_decisions_total",
			Help: "Admission requests answered by scripts, by script, webhook (validate, mutate), operation and outcome (allowed, denied, warned, audited, errored).",
		}, []string{"script", "webhook", "operation", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "jsinformer_admission_duration_seconds",
			Help:    "Time a script took to decide an admission request (waiting for a free runtime included), by script, webhook and operation.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, []string{"script", "webhook", "operation"}),
	}
	reg.MustRegister(m.decisions, m.duration)
	return m
}

// Observe counts one decision and its duration.
func (m *Metrics) Observe(o Observation) {
	op := string(o.Request.Operation)
	m.decisions.WithLabelValues(o.Script, o.Kind, op, o.Decision.Outcome).Inc()
	m.duration.WithLabelValues(o.Script, o.Kind, op).Observe(o.Decision.Took.Seconds())
}
