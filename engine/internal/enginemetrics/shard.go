package enginemetrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Ring is what the shard collector reads at scrape time, on the scrape's goroutine.
type Ring struct {
	// Members returns the ring this replica acts on: its size and the ring changes applied.
	Members func() (members int, generation uint64)
	// Pending reports whether this replica is moving to another ring.
	Pending func() bool
	// Owned returns, per script with a serving version, the cached objects whose keys this
	// replica owns.
	Owned func() map[string]int
	// Cached returns, per script with a serving version whose caches are partitioned
	// (--shard-cache), the objects it caches on this replica.
	Cached func() map[string]int
}

// shardCollector exposes the ring as this replica sees it, read at scrape time: the members,
// the ring changes applied, and per script the cached objects whose keys this replica owns.
type shardCollector struct {
	ring                                  Ring
	members, pending, moves, keys, cached *prometheus.Desc
}

// NewShard returns the collector of a sharded runner's ring (--sharded).
func NewShard(ring Ring) prometheus.Collector {
	return &shardCollector{ring: ring,
		members: prometheus.NewDesc("jsinformer_shard_members", "Replicas in the shard ring this runner acts on (--sharded); 0 before it joined.", nil, nil),
		pending: prometheus.NewDesc("jsinformer_shard_pending",
			"1 while this runner moves to another shard ring, or waits for the plan of one it observed (--sharded); a move takes seconds, one that lasts is stuck.", nil, nil),
		moves: prometheus.NewDesc("jsinformer_shard_moves_total",
			"Shard ring changes this runner applied: each moves about 1/N of the keys to or from it.", nil, nil),
		keys: prometheus.NewDesc("jsinformer_shard_keys", "Objects in the script's cache whose keys this runner owns (--sharded).", []string{"script"}, nil),
		cached: prometheus.NewDesc("jsinformer_shard_cached_objects",
			"Objects the script caches on this runner, for scripts whose caches are partitioned by namespace (--shard-cache): compare the replicas to see skew.", []string{"script"}, nil),
	}
}

func (c *shardCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.members
	ch <- c.pending
	ch <- c.moves
	ch <- c.keys
	ch <- c.cached
}

func (c *shardCollector) Collect(ch chan<- prometheus.Metric) {
	members, generation := c.ring.Members()
	ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(members))
	pending := 0.0
	if c.ring.Pending != nil && c.ring.Pending() {
		pending = 1
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, pending)
	ch <- prometheus.MustNewConstMetric(c.moves, prometheus.CounterValue, float64(generation))
	for script, n := range c.ring.Owned() {
		ch <- prometheus.MustNewConstMetric(c.keys, prometheus.GaugeValue, float64(n), script)
	}
	if c.ring.Cached == nil {
		return
	}
	for script, n := range c.ring.Cached() {
		ch <- prometheus.MustNewConstMetric(c.cached, prometheus.GaugeValue, float64(n), script)
	}
}
