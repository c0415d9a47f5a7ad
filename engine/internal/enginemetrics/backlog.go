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
// not yet handled: the first sign of a script too slow for its resource. Versions of one
// script with the same content count as one series.
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

// Collect implements prometheus.Collector. Two live versions may share a script and content
// (saving A, then B, then A again while the first A still drains): their queues are summed
// into one series, as a registry refuses a scrape with a series twice.
func (b *backlog) Collect(ch chan<- prometheus.Metric) {
	type labels struct{ script, version string }
	queued := map[labels]int{}
	b.mu.Lock()
	for v := range b.versions {
		script, version, n := v.QueueDepth()
		queued[labels{script, version}] += n
	}
	b.mu.Unlock()
	for l, n := range queued {
		ch <- prometheus.MustNewConstMetric(b.desc, prometheus.GaugeValue, float64(n), l.script, l.version)
	}
}
