package enginemetrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/shardrange"
)

// TestInformersShardSeries: a partitioned informer has received, kept and server-filtered
// series; one that is not partitioned has none.
func TestInformersShardSeries(t *testing.T) {
	t.Parallel()
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	partitioned := dynamicinformer.Key{GVR: pods, Partition: shardrange.Partition{Field: shardrange.Namespace, Mask: shardrange.Mask{1}}}
	health := func() []dynamicinformer.Health {
		return []dynamicinformer.Health{
			{Key: dynamicinformer.Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}, Healthy: true},
			{Key: partitioned, Healthy: true, Shard: dynamicinformer.ShardStatus{Partition: partitioned.Partition,
				Mode: dynamicinformer.ShardServer, Received: 7, Kept: 7}},
		}
	}
	c := enginemetrics.NewInformers(health, func() error { return nil })
	name := partitioned.String()
	want := `
# HELP jsinformer_informer_shard_kept_total Objects a partitioned informer received that are in its partition, which it cached.
# TYPE jsinformer_informer_shard_kept_total counter
jsinformer_informer_shard_kept_total{informer="` + name + `"} 7
# HELP jsinformer_informer_shard_received_total Objects a partitioned informer received from the API server (list items and watch events).
# TYPE jsinformer_informer_shard_received_total counter
jsinformer_informer_shard_received_total{informer="` + name + `"} 7
# HELP jsinformer_informer_shard_server_filtered 1 when the API server filters a partitioned informer's objects (it echoed the shardSelector), 0 when the runner does.
# TYPE jsinformer_informer_shard_server_filtered gauge
jsinformer_informer_shard_server_filtered{informer="` + name + `"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "jsinformer_informer_shard_received_total",
		"jsinformer_informer_shard_kept_total", "jsinformer_informer_shard_server_filtered"); err != nil {
		t.Error(err)
	}
}

// TestInformersBytesSeries: every informer, partitioned or not, has its bytes received.
func TestInformersBytesSeries(t *testing.T) {
	t.Parallel()
	cms := dynamicinformer.Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	pods := dynamicinformer.Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		Partition: shardrange.Partition{Field: shardrange.Namespace, Mask: shardrange.Mask{1}}}
	health := func() []dynamicinformer.Health {
		return []dynamicinformer.Health{{Key: cms, Healthy: true, BytesReceived: 1234},
			{Key: pods, Healthy: true, BytesReceived: 56, Shard: dynamicinformer.ShardStatus{Partition: pods.Partition, Mode: dynamicinformer.ShardClient}}}
	}
	want := `
# HELP jsinformer_informer_received_bytes_total Bytes of the list and watch response bodies the informer read from the API server (after HTTP decompression).
# TYPE jsinformer_informer_received_bytes_total counter
jsinformer_informer_received_bytes_total{informer="` + cms.String() + `"} 1234
jsinformer_informer_received_bytes_total{informer="` + pods.String() + `"} 56
`
	c := enginemetrics.NewInformers(health, func() error { return nil })
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "jsinformer_informer_received_bytes_total"); err != nil {
		t.Error(err)
	}
}
