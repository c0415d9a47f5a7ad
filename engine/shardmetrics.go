package engine

import (
	"github.com/prometheus/client_golang/prometheus"
)

// shardCollector exposes the ring as this replica sees it, read at scrape time: the members,
// the ring changes applied, and per script the cached objects whose keys this replica owns.
type shardCollector struct {
	e                    *Engine
	members, moves, keys *prometheus.Desc
}

func newShardCollector(e *Engine) *shardCollector {
	return &shardCollector{e: e,
		members: prometheus.NewDesc("jsinformer_shard_members", "Replicas in the shard ring this runner acts on (--sharded); 0 before it joined.", nil, nil),
		moves: prometheus.NewDesc("jsinformer_shard_moves_total",
			"Shard ring changes this runner applied: each moves about 1/N of the keys to or from it.", nil, nil),
		keys: prometheus.NewDesc("jsinformer_shard_keys", "Objects in the script's cache whose keys this runner owns (--sharded).", []string{"script"}, nil),
	}
}

func (c *shardCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.members
	ch <- c.moves
	ch <- c.keys
}

func (c *shardCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.e.shard.Status()
	ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(len(st.Members)))
	ch <- prometheus.MustNewConstMetric(c.moves, prometheus.CounterValue, float64(st.Generation))
	for _, v := range c.e.needs.versions() {
		if v.currentState() != stateCurrent {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.keys, prometheus.GaugeValue, float64(c.owned(v)), v.name)
	}
}

// owned counts v's cached objects this replica owns; the store is read under its lock.
func (c *shardCollector) owned(v *version) int {
	subs := v.insp.subs.Load()
	if subs == nil {
		return 0
	}
	n := 0
	for _, sub := range *subs {
		for _, key := range v.store.Keys(sub.cache.Resource) {
			if c.e.shard.Handles(key) {
				n++
			}
		}
	}
	return n
}
