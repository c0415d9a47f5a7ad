package scripting

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/heapsize"
)

// TestMemoryUsageFollowsWhatTheScriptKeeps runs a handler ten times, measuring after each
// call, and checks the measurements against what the script keeps: memory it allocates and
// keeps (at module level or in a closure) is counted and grows; memory it drops is not; views
// of the runner's objects count only their wrappers.
func TestMemoryUsageFollowsWhatTheScriptKeeps(t *testing.T) {
	t.Parallel()
	const mb = 1 << 20
	tests := []struct {
		name     string
		src      string
		min, max int64 // bounds of the growth over the nine calls after the first
	}{
		{name: "module-level array", min: 9 * mb, max: 10 * mb, // nine strings of 1 MiB
			src: `const kept = []; export default { onAdd() { kept.push("x".repeat(1 << 20) + kept.length) } }`},
		// nine arrays of 32,768 floats: a 16-byte interface and an 8-byte box each
		{name: "closure variable", min: 9 * 24 << 15, max: 9 * 30 << 15, src: `
function keeper() { const arr = []; return () => arr.push(new Array(1 << 15).fill(1.5)) }
const keep = keeper();
export default { onAdd() { keep() } }`},
		{name: "garbage only", max: mb / 4,
			src: `let n = 0; export default { onAdd() { n += "x".repeat(1 << 20).length } }`},
		{name: "views of the runner's objects", max: mb / 4,
			src: `const seen = []; export default { onAdd(o) { seen.push(o) } }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "m.js", tt.src, Options{})
			defer s.Close()
			s.mem.budget = time.Minute // exact figures: a loaded machine took 1.03 s for one walk
			first := measuredCall(t, s)
			for range 9 {
				measuredCall(t, s)
			}
			last := s.MemoryUsage()
			grew := last.Bytes - first.Bytes
			if last.Seq != 10 || last.Truncated || grew < tt.min || grew > tt.max {
				t.Fatalf("after ten calls: %+v, grew %d bytes since the first (%d); want 10 measurements, growth in [%d, %d]",
					last, grew, first.Bytes, tt.min, tt.max)
			}
			t.Logf("runtime %d bytes after one call, %d after ten (walk took %s)", first.Bytes, last.Bytes, last.Took)
		})
	}
}

// measuredCall asks for a measurement and makes a call, which takes it.
func measuredCall(t *testing.T, s *Script) MemoryUsage {
	t.Helper()
	s.RequestMemoryUsage()
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	return s.MemoryUsage()
}

func TestMemoryUsageIsTakenOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "m.js", `export default { onAdd() {} }`, Options{})
	defer s.Close()
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := s.MemoryUsage(); got.Seq != 0 {
		t.Fatalf("measured without a request: %+v", got)
	}
	measuredCall(t, s)
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := s.MemoryUsage(); got.Seq != 1 || got.Bytes <= 0 {
		t.Fatalf("one request, two calls: %+v, want exactly one measurement", got)
	}
}

// BenchmarkMemoryUsage measures one measurement of a runtime holding n small objects at
// module level (three properties each), the cost a script pays once per guard check while
// the heap is above half the memory limit.
func BenchmarkMemoryUsage(b *testing.B) {
	for _, n := range []int{0, 10_000, 100_000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			before := heapAlloc()
			s := newTestScript(b, "m.js", fmt.Sprintf(`const kept = [];
for (let i = 0; i < %d; i++) kept.push({ name: "object-" + i, n: i, ok: true });
export default { onAdd() { return kept.length } }`, n), Options{Timeout: time.Minute})
			defer s.Close()
			var in *instance
			onRuntime(b, s, func(i *instance) { in = i })
			grew := heapAlloc() - before // the Go heap the runtime added, for the estimate's precision
			b.ResetTimer()
			var last heapsize.Result
			for b.Loop() {
				last = heapsize.Measure(in.roots(), runtimeWalk(time.Now().Add(time.Minute)))
			}
			b.ReportMetric(float64(last.Bytes)/(1<<20), "MiB")
			b.ReportMetric(float64(last.Objects), "allocations")
			b.ReportMetric(float64(grew)/(1<<20), "heap-MiB")
		})
	}
}

// heapAlloc is the live heap after a full collection.
func heapAlloc() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
