package engine

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// backlog is a Prometheus collector reporting, at scrape time, how many events each live
// script version has queued but not yet handled: the first sign of a script too slow for its
// resource. Versions are added when created and removed when their goroutines have ended.
type backlog struct {
	mu       sync.Mutex
	versions map[*version]struct{}
	desc     *prometheus.Desc
}

func newBacklog() *backlog {
	return &backlog{
		versions: map[*version]struct{}{},
		desc: prometheus.NewDesc("jsinformer_queue_depth",
			"Events queued for a script version and not yet handled.", []string{"script", "version"}, nil),
	}
}

func (b *backlog) add(v *version) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.versions[v] = struct{}{}
}

func (b *backlog) remove(v *version) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.versions, v)
}

// Describe implements prometheus.Collector.
func (b *backlog) Describe(ch chan<- *prometheus.Desc) { ch <- b.desc }

// Collect implements prometheus.Collector.
func (b *backlog) Collect(ch chan<- prometheus.Metric) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for v := range b.versions {
		n := v.queue.len()
		if v.intake != v.queue {
			n += v.intake.len()
		}
		ch <- prometheus.MustNewConstMetric(b.desc, prometheus.GaugeValue, float64(n), v.name, v.hash)
	}
}
