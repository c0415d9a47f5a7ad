package admission

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the admission series: decisions by outcome and the time each took, per script,
// webhook kind and operation, and the runner's own time per review by kind. Observe is
// Config.Observe and ObserveAnswer Config.Answered; safe from any goroutine.
type Metrics struct {
	decisions *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	answers   *prometheus.HistogramVec
}

// answerBuckets are fine around 1 ms, the runner's target for a trivial validate
// (docs/benchmarks.md), so its p99 can be read from the series.
var answerBuckets = []float64{0.0001, 0.0002, 0.0003, 0.0004, 0.0005, 0.0006, 0.0008, 0.001, 0.00125, 0.0015, 0.002,
	0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

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
		answers: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "jsinformer_admission_request_duration_seconds",
			Help:    "The runner's own time per admission review, from its body read whole to its answer handed to the connection (all the scripts of a shared entry included), by webhook.",
			Buckets: answerBuckets,
		}, []string{"webhook"}),
	}
	reg.MustRegister(m.decisions, m.duration, m.answers)
	return m
}

// Observe counts one decision and its duration.
func (m *Metrics) Observe(o Observation) {
	op := string(o.Request.Operation)
	m.decisions.WithLabelValues(o.Script, o.Kind, op, o.Decision.Outcome).Inc()
	m.duration.WithLabelValues(o.Script, o.Kind, op).Observe(o.Decision.Took.Seconds())
}

// ObserveAnswer records the runner's own time for one review.
func (m *Metrics) ObserveAnswer(a Answer) {
	m.answers.WithLabelValues(a.Kind).Observe(a.Took.Seconds())
}
