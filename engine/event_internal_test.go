package engine

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
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
			q := queue.New[event]()
			handlerFor(&subscription{}, q).OnDelete(tt.deleted)
			q.Close()
			ev, ok := q.Pop(nil)
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
			q := queue.New[event]()
			handlerFor(&subscription{}, q).OnUpdate(tt.old, tt.new)
			q.Close()
			var got []event
			for ev, ok := q.Pop(nil); ok; ev, ok = q.Pop(nil) {
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
