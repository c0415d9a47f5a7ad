package dynamicinformer

import (
	"bytes"
	"log/slog"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
	"github.com/jsinformer/jsinformer/shardrange"
)

// BenchmarkPartitionedListRead reads one list of 20,000 Deployments as a partitioned
// informer in client mode does (every object sent, those outside the partition dropped as
// each is decoded), for no partition and for a quarter of the uid hash space; it reports the
// objects kept and the heap the decoded list holds once read (live-B):
//
//	go test -run '^$' -bench BenchmarkPartitionedListRead -benchmem -count 3 ./dynamicinformer/
func BenchmarkPartitionedListRead(b *testing.B) {
	list := deployments.ListJSON(benchObjects)
	quarter := shardrange.Partition{Field: shardrange.UID, Mask: shardrange.Mask{^uint64(0)}}
	for _, tc := range []struct {
		name string
		p    shardrange.Partition
	}{{"whole", shardrange.Partition{}}, {"quarter", quarter}} {
		b.Run(tc.name, func(b *testing.B) {
			read := func() *unstructured.UnstructuredList {
				shard := newPartition(tc.p, slog.New(slog.DiscardHandler), nil)
				opts := unstructuredjson.Options{DropManagedFields: true}
				if shard != nil {
					opts.Keep = shard.keep
				}
				out, err := unstructuredjson.ReadList(bytes.NewReader(list), opts)
				if err != nil {
					b.Fatal(err)
				}
				return out
			}
			before := heapAfterGC()
			out := read()
			live, kept := heapAfterGC()-min(before, heapAfterGC()), len(out.Items)
			runtime.KeepAlive(out)
			out = nil
			b.SetBytes(int64(len(list)))
			b.ResetTimer()
			for b.Loop() {
				read()
			}
			b.ReportMetric(float64(kept), "kept")
			b.ReportMetric(float64(live), "live-B")
		})
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
