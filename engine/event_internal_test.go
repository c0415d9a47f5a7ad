package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
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

// TestUnwrapKeyMatchesClientGo pins unwrap's fast key to client-go's own key function.
func TestUnwrapKeyMatchesClientGo(t *testing.T) {
	t.Parallel()
	for _, meta := range []map[string]any{
		{"name": "x", "namespace": "ns"},
		{"name": "node-1"},
		{"name": "x", "namespace": ""},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": meta}}
		want, err := cache.MetaNamespaceKeyFunc(u)
		if err != nil {
			t.Fatal(err)
		}
		if _, got, ok := unwrap(u); !ok || got != want {
			t.Errorf("unwrap(%v) key = %q, %v; client-go says %q", meta, got, ok, want)
		}
	}
	if _, _, ok := unwrap(&corev1.Pod{}); ok {
		t.Error("unwrap accepted a typed object")
	}
}

// TestHandlerForReadsResourceVersion: adds and updates carry the resourceVersion the listener
// read with the key, and an event without one reads it from its object.
func TestHandlerForReadsResourceVersion(t *testing.T) {
	t.Parallel()
	obj := func(rv string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns", "uid": "u", "resourceVersion": rv}}}
	}
	q := newQueue[event]()
	h := handlerFor(&subscription{}, q)
	h.OnAdd(obj("7"), true)
	h.OnUpdate(obj("7"), obj("9"))
	q.close()
	for _, want := range []string{"7", "9"} {
		ev, ok := q.pop(nil)
		if !ok || ev.rv != want || ev.resourceVersion() != want {
			t.Fatalf("event rv %q, resourceVersion() %q, want %q", ev.rv, ev.resourceVersion(), want)
		}
	}
	replayed := event{kind: eventReplay, obj: obj("11").Object}
	if got := replayed.resourceVersion(); got != "11" {
		t.Errorf("resourceVersion() of an event the listener did not read = %q, want 11", got)
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

// TestQueueAcrossChunks interleaves bursts and partial drains so that chunks are linked,
// emptied, recycled as the spare or into a pool and reused, and checks FIFO order and len
// throughout. With a pool, two queues take turns on it, as a reload's new version takes the
// chunks its predecessor emptied.
func TestQueueAcrossChunks(t *testing.T) {
	t.Parallel()
	steps := []struct{ push, pop int }{{600, 300}, {600, 900}, {1, 1}, {chunkSize, chunkSize}, {3 * chunkSize, 10}, {0, 3*chunkSize - 10}}
	for _, pooled := range []bool{false, true} {
		t.Run(fmt.Sprintf("pooled=%v", pooled), func(t *testing.T) {
			t.Parallel()
			var pool sync.Pool
			for turn := range 2 {
				q := newQueue[int]()
				if pooled {
					q.pool = &pool
				}
				next, want := 0, 0
				for _, step := range steps {
					for range step.push {
						q.push(next)
						next++
					}
					for range step.pop {
						got, ok := q.pop(nil)
						if !ok || got != want {
							t.Fatalf("turn %d: pop = %d, %v; want %d", turn, got, ok, want)
						}
						want++
					}
					if q.len() != next-want {
						t.Fatalf("turn %d: len = %d, want %d", turn, q.len(), next-want)
					}
				}
			}
		})
	}
}

// A pooled chunk comes back with no item left in it: the queue zeroes what it takes, so the
// pool holds no reference to an object a version was shown.
func TestQueuePoolHoldsNoItems(t *testing.T) {
	t.Parallel()
	var pool sync.Pool
	q := newQueue[*int]()
	q.pool = &pool
	for i := range 20 * chunkSize { // many chunks: the race detector drops a share of Puts
		q.push(&i)
	}
	for range 20 * chunkSize {
		if _, ok := q.pop(nil); !ok {
			t.Fatal("queue drained early")
		}
	}
	pooled := 0
	for c, ok := pool.Get().(*chunk[*int]); ok; c, ok = pool.Get().(*chunk[*int]) {
		pooled++
		if c.n != 0 || c.next != 0 || c.link != nil {
			t.Fatalf("pooled chunk n=%d next=%d link=%v, want an empty chunk", c.n, c.next, c.link != nil)
		}
		for i, item := range c.items {
			if item != nil {
				t.Fatalf("pooled chunk holds item %d", i)
			}
		}
	}
	if pooled == 0 {
		t.Fatal("no emptied chunk reached the pool")
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
	q.push(2)
	if item, ok := q.pop(abort); ok {
		t.Fatalf("pop after abort returned %d, queued before it: an aborted consumer takes nothing more", item)
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

// An update whose uid changed is the old object's delete (final state unknown) and the new
// one's add, in that order; a plain update stays one update.
func TestHandlerSplitsRecreatedObjects(t *testing.T) {
	t.Parallel()
	obj := func(uid string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns", "uid": uid}}}
	}
	tests := []struct {
		name     string
		old, new *unstructured.Unstructured
		want     []eventKind
	}{
		{"same uid", obj("a"), obj("a"), []eventKind{eventUpdate}},
		{"new uid", obj("a"), obj("b"), []eventKind{eventDelete, eventAdd}},
		{"uid unknown", obj(""), obj("b"), []eventKind{eventUpdate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := newQueue[event]()
			handlerFor(&subscription{}, q).OnUpdate(tt.old, tt.new)
			q.close()
			var got []event
			for ev, ok := q.pop(nil); ok; ev, ok = q.pop(nil) {
				got = append(got, ev)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events, want %v", len(got), tt.want)
			}
			for i, ev := range got {
				if ev.kind != tt.want[i] || ev.key != "ns/x" {
					t.Errorf("event %d = kind %d key %q, want kind %d", i, ev.kind, ev.key, tt.want[i])
				}
			}
			if len(got) == 2 && (!got[0].unknown || uidOf(got[0].obj) != "a" || uidOf(got[1].obj) != "b" || got[1].initial) {
				t.Errorf("delete must carry the old object as final state unknown, the add the new one: %+v", got)
			}
		})
	}
}
