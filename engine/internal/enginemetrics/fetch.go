package enginemetrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/scripting"
)

// Fetch is the series of scripts' fetch requests, by script and host (the hosts a script
// reaches are bounded by --allow-net and its `net` declaration): requests by status class,
// failures by kind, latency. Never a path or query, which may carry credentials.
type Fetch struct {
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewFetch makes the fetch series and registers them on reg, if not nil.
func NewFetch(reg prometheus.Registerer) *Fetch {
	f := &Fetch{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_fetch_requests_total",
			Help: "Scripts' fetch requests that got a response, by script, host and status class (2xx, 3xx, 4xx, 5xx).",
		}, []string{"script", "host", "code"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_fetch_errors_total",
			Help: "Scripts' fetch requests that failed, by script, host and kind (refused, timeout, body_too_large, dns, tls, canceled, other).",
		}, []string{"script", "host", "kind"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "jsinformer_fetch_duration_seconds",
			Help:    "Scripts' fetch request duration, response body included, by script and host.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}, []string{"script", "host"}),
	}
	if reg != nil {
		reg.MustRegister(f.requests, f.errors, f.duration)
	}
	return f
}

// Observe counts one request of script; safe from any goroutine.
func (f *Fetch) Observe(script string, r scripting.RequestRecord) {
	f.duration.WithLabelValues(script, r.Host).Observe(r.Duration.Seconds())
	if r.Error != "" {
		f.errors.WithLabelValues(script, r.Host, r.Error).Inc()
		return
	}
	if r.Status > 0 && r.Status < 600 {
		f.requests.WithLabelValues(script, r.Host, strconv.Itoa(r.Status/100)+"xx").Inc()
	}
}

// Forget deletes every series of script.
func (f *Fetch) Forget(script string) {
	labels := prometheus.Labels{"script": script}
	f.requests.DeletePartialMatch(labels)
	f.errors.DeletePartialMatch(labels)
	f.duration.DeletePartialMatch(labels)
}
