package engine

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

func TestHandlerUnwrapsTombstones(t *testing.T) {
	t.Parallel()
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns"}}}
	tests := []struct {
		name    string
		deleted any
		wantKey string
		wantObj bool
		unknown bool
	}{
		{"plain delete", obj, "ns/x", true, false},
		{"tombstone with last state", cache.DeletedFinalStateUnknown{Key: "ns/x", Obj: obj}, "ns/x", true, true},
		{"tombstone without state", cache.DeletedFinalStateUnknown{Key: "ns/y", Obj: nil}, "ns/y", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := newQueue[event]()
			handlerFor(&subscription{}, q).OnDelete(tt.deleted)
			q.close()
			ev, ok := q.pop(nil)
			if !ok {
				t.Fatal("no event queued")
			}
			if ev.kind != eventDelete || ev.key != tt.wantKey || (ev.obj != nil) != tt.wantObj || ev.unknown != tt.unknown {
				t.Fatalf("event = kind %d key %q obj %v unknown %v", ev.kind, ev.key, ev.obj != nil, ev.unknown)
			}
		})
	}
}

func TestQueueKeepsOrderAndDrainsAfterClose(t *testing.T) {
	t.Parallel()
	q := newQueue[int]()
	const n = 5000
	go func() {
		for i := range n {
			q.push(i)
		}
		q.close()
	}()
	for want := 0; ; want++ {
		got, ok := q.pop(nil)
		if !ok {
			if want != n {
				t.Fatalf("drained after %d items, want %d", want, n)
			}
			return
		}
		if got != want {
			t.Fatalf("pop = %d, want %d", got, want)
		}
	}
}

func TestQueueRefusesAfterCloseAndAborts(t *testing.T) {
	t.Parallel()
	q := newQueue[int]()
	abort := make(chan struct{})
	close(abort)
	if _, ok := q.pop(abort); ok {
		t.Fatal("pop on an empty queue returned an item after abort")
	}
	q.close()
	if q.push(1) {
		t.Fatal("push after close accepted")
	}
}

func TestBacklogReportsQueuedEventsPerVersion(t *testing.T) {
	t.Parallel()
	v := &version{name: "a.js", hash: "abc", queue: newQueue[event](), intake: newQueue[event]()}
	v.intake.push(event{kind: eventAdd})
	v.queue.push(event{kind: eventAdd})
	v.queue.push(event{kind: eventUpdate})
	b := newBacklog()
	b.add(v)
	reg := prometheus.NewRegistry()
	reg.MustRegister(b)
	if got := testutil.ToFloat64(b); got != 3 {
		t.Fatalf("queue depth = %v, want 3", got)
	}
	b.remove(v)
	if n, err := testutil.GatherAndCount(reg, "jsinformer_queue_depth"); err != nil || n != 0 {
		t.Fatalf("series after remove = %d (%v), want 0", n, err)
	}
}
