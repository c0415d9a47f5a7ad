package enginemetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/dynamicinformer"
)

// Informers is a Prometheus collector reporting, at scrape time, each running informer's
// health from the factory, and whether the runner is ready.
type Informers struct {
	health                         func() []dynamicinformer.Health
	ready                          func() error
	healthy, sinceContact, relists *prometheus.Desc
	restarts, readyDesc            *prometheus.Desc
	received, kept, serverFiltered *prometheus.Desc
	bytes                          *prometheus.Desc
}

// NewInformers reports the informers health lists and the readiness ready answers (nil:
// ready); both are called on the scrape's goroutine.
func NewInformers(health func() []dynamicinformer.Health, ready func() error) *Informers {
	labels := []string{"informer"}
	return &Informers{
		health: health, ready: ready,
		healthy: prometheus.NewDesc("jsinformer_informer_healthy",
			"1 while the informer can list and watch, 0 from a failed list or watch until one succeeds.", labels, nil),
		sinceContact: prometheus.NewDesc("jsinformer_informer_seconds_since_contact",
			"Seconds since the informer last received anything from the API server (a list, a watch opened, an event, a bookmark).", labels, nil),
		relists: prometheus.NewDesc("jsinformer_informer_relists_total",
			"Lists after the informer's initial one, such as after a watch expired (410 Gone).", labels, nil),
		restarts: prometheus.NewDesc("jsinformer_informer_watch_restarts_total",
			"Watches the informer opened after its first one.", labels, nil),
		bytes: prometheus.NewDesc("jsinformer_informer_received_bytes_total",
			"Bytes of the list and watch response bodies the informer read from the API server (after HTTP decompression).", labels, nil),
		received: prometheus.NewDesc("jsinformer_informer_shard_received_total",
			"Objects a partitioned informer received from the API server (list items and watch events).", labels, nil),
		kept: prometheus.NewDesc("jsinformer_informer_shard_kept_total",
			"Objects a partitioned informer received that are in its partition, which it cached.", labels, nil),
		serverFiltered: prometheus.NewDesc("jsinformer_informer_shard_server_filtered",
			"1 when the API server filters a partitioned informer's objects (it echoed the shardSelector), 0 when the runner does.", labels, nil),
		readyDesc: prometheus.NewDesc("jsinformer_ready",
			"1 when the runner is ready (what /readyz answers 200 for), else 0.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (s *Informers) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.healthy, s.sinceContact, s.relists, s.restarts, s.bytes, s.received, s.kept, s.serverFiltered, s.readyDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (s *Informers) Collect(ch chan<- prometheus.Metric) {
	for _, h := range s.health() {
		name := h.Key.String()
		ch <- prometheus.MustNewConstMetric(s.healthy, prometheus.GaugeValue, boolValue(h.Healthy), name)
		if !h.LastContact.IsZero() {
			ch <- prometheus.MustNewConstMetric(s.sinceContact, prometheus.GaugeValue, time.Since(h.LastContact).Seconds(), name)
		}
		ch <- prometheus.MustNewConstMetric(s.relists, prometheus.CounterValue, float64(h.Relists), name)
		ch <- prometheus.MustNewConstMetric(s.restarts, prometheus.CounterValue, float64(h.WatchRestarts), name)
		ch <- prometheus.MustNewConstMetric(s.bytes, prometheus.CounterValue, float64(h.BytesReceived), name)
		if h.Shard.Mode != dynamicinformer.ShardOff {
			ch <- prometheus.MustNewConstMetric(s.received, prometheus.CounterValue, float64(h.Shard.Received), name)
			ch <- prometheus.MustNewConstMetric(s.kept, prometheus.CounterValue, float64(h.Shard.Kept), name)
			ch <- prometheus.MustNewConstMetric(s.serverFiltered, prometheus.GaugeValue, boolValue(h.Shard.Mode == dynamicinformer.ShardServer), name)
		}
	}
	ch <- prometheus.MustNewConstMetric(s.readyDesc, prometheus.GaugeValue, boolValue(s.ready() == nil))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
