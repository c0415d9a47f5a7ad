package unstructuredjson_test

import (
	"runtime"
	"testing"

	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// BenchmarkRetained reports the live heap a decoded list of 20,000 Deployments holds
// (managedFields dropped), as an informer's cache would:
//
//	go test -run '^$' -bench BenchmarkRetained -count 3 ./internal/unstructuredjson/
func BenchmarkRetained(b *testing.B) {
	data, _ := benchData(b)
	for b.Loop() {
		before := liveHeap()
		l, err := unstructuredjson.List(data, unstructuredjson.Options{DropManagedFields: true})
		if err != nil {
			b.Fatal(err)
		}
		after := liveHeap()
		runtime.KeepAlive(l)
		b.ReportMetric(float64(after-before)/(1<<20), "live-MB")
		b.ReportMetric(float64(after-before)/float64(len(l.Items)), "live-B/object")
	}
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
