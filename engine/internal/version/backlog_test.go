package version

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

func TestBacklogReportsQueuedEventsPerVersion(t *testing.T) {
	t.Parallel()
	v := &Version{name: "a.js", hash: "abc", queue: queue.New[Event](), intake: queue.New[Event]()}
	v.intake.Push(Event{Kind: EventAdd})
	v.queue.Push(Event{Kind: EventAdd})
	v.queue.Push(Event{Kind: EventUpdate})
	reg := prometheus.NewRegistry()
	m := enginemetrics.NewEngine(reg)
	m.VersionAdded(v)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`# HELP jsinformer_queue_depth Events queued for a script version and not yet handled.
# TYPE jsinformer_queue_depth gauge
jsinformer_queue_depth{script="a.js",version="abc"} 3
`), "jsinformer_queue_depth"); err != nil {
		t.Fatalf("queue depth: %v", err)
	}
	m.VersionEnded(v)
	if n, err := testutil.GatherAndCount(reg, "jsinformer_queue_depth"); err != nil || n != 0 {
		t.Fatalf("series after remove = %d (%v), want 0", n, err)
	}
}
