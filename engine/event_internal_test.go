package engine

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// TestHandlerForReadsResourceVersion: adds and updates carry the resourceVersion the listener
// read with the key, and an event without one reads it from its object.
func TestHandlerForReadsResourceVersion(t *testing.T) {
	t.Parallel()
	obj := func(rv string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns", "uid": "u", "resourceVersion": rv}}}
	}
	q := queue.New[event]()
	h := handlerFor(&subscription{}, q)
	h.OnAdd(obj("7"), true)
	h.OnUpdate(obj("7"), obj("9"))
	q.Close()
	for _, want := range []string{"7", "9"} {
		ev, ok := q.Pop(nil)
		if !ok || ev.rv != want || ev.resourceVersion() != want {
			t.Fatalf("event rv %q, resourceVersion() %q, want %q", ev.rv, ev.resourceVersion(), want)
		}
	}
	replayed := event{kind: eventReplay, obj: obj("11").Object}
	if got := replayed.resourceVersion(); got != "11" {
		t.Errorf("resourceVersion() of an event the listener did not read = %q, want 11", got)
	}
}

func TestBacklogReportsQueuedEventsPerVersion(t *testing.T) {
	t.Parallel()
	v := &version{name: "a.js", hash: "abc", queue: queue.New[event](), intake: queue.New[event]()}
	v.intake.Push(event{kind: eventAdd})
	v.queue.Push(event{kind: eventAdd})
	v.queue.Push(event{kind: eventUpdate})
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
