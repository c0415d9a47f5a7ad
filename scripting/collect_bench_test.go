package scripting

import (
	"fmt"
	"testing"
)

// BenchmarkCollect measures a collect returning one sample per object, for 20,000 objects:
// the list of views, the script's map, and reading every sample back with its labels.
func BenchmarkCollect(b *testing.B) {
	s := newTestScript(b, "bench.js", `export default { metrics: { r: { type: "gauge", help: "h", labels: ["namespace", "name"],
  collect: (ctx) => ctx.cache.list().map((d) => ({ labels: { namespace: d.metadata.namespace, name: d.metadata.name }, value: d.spec.replicas })) } } }`, Options{})
	objs := make([]Object, 20000)
	for i := range objs {
		o := sample()
		o["metadata"] = map[string]any{"name": fmt.Sprintf("web-%d", i), "namespace": "default"}
		objs[i] = o
	}
	ev := Event{Cache: &fakeCache{objs: objs}}
	b.ReportAllocs()
	for b.Loop() {
		samples, err := s.Collect("r", ev, 100000)
		if err != nil || len(samples) != len(objs) {
			b.Fatal(err, len(samples))
		}
	}
}
