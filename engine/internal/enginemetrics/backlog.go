package enginemetrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Backlogged is a live version as the queue-depth gauge reads it at scrape time.
type Backlogged interface {
	// QueueDepth is the version's script, its content hash, and the events queued for it and
	// not yet handled; safe from any goroutine.
	QueueDepth() (script, version string, queued int)
}

// backlog reports, at scrape time, how many events each live script version has queued but
// not yet handled: the first sign of a script too slow for its resource.
type backlog struct {
	mu       sync.Mutex
	versions map[Backlogged]struct{}
	desc     *prometheus.Desc
}

func newBacklog() *backlog {
	return &backlog{
		versions: map[Backlogged]struct{}{},
		desc: prometheus.NewDesc("jsinformer_queue_depth",
			"Events queued for a script version and not yet handled.", []string{"script", "version"}, nil),
	}
}

func (b *backlog) add(v Backlogged) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.versions[v] = struct{}{}
}

func (b *backlog) remove(v Backlogged) {
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
		script, version, n := v.QueueDepth()
		ch <- prometheus.MustNewConstMetric(b.desc, prometheus.GaugeValue, float64(n), script, version)
	}
}
