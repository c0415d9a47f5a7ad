package trace_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// BenchmarkWorkerPerEvent is what recording adds to one handled event on the handler
// worker's path: Start, Call, Ended and Done, with the ring of the default size full and
// every event on an object of its own, as in an initial sync.
func BenchmarkWorkerPerEvent(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("recording=%v", on), func(b *testing.B) {
			keys := make([]string, 20_000)
			for i := range keys {
				keys[i] = fmt.Sprintf("ns/deploy-%d", i)
			}
			w := trace.NewWorker(nil, nil)
			if on {
				_, tap := trace.Tapped(scripting.Options{}, false, nil)
				w = trace.NewWorker(trace.New(0), tap)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				key := keys[i%len(keys)]
				i++
				r := w.Start(inspection.TraceRecord{Time: time.Now(), Script: "a.js", Version: "0123456789ab",
					Resource: "apps/v1/deployments", Object: key, Event: "add", Initial: true, ResourceVersion: "12345"})
				start := w.Call("onAdd", "apps/v1/deployments", key, r, false)
				w.Ended("onAdd", r, time.Since(start), nil)
				w.Done(r)
			}
		})
	}
}
