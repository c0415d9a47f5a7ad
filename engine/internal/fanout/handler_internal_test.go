package fanout

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// plain is a subscriber whose items are the notifications themselves.
type plain struct {
	inf cache.SharedIndexInformer
	q   *queue.Queue[Notification]
}

func newPlain(inf cache.SharedIndexInformer) *plain {
	return &plain{inf: inf, q: queue.New[Notification]()}
}

func (p *plain) Informer() cache.SharedIndexInformer { return p.inf }
func (p *plain) Intake() *queue.Queue[Notification]  { return p.q }
func (p *plain) Item(n Notification) Notification    { return n }

// handlerFor is a Handler with a plain subscriber, and that subscriber's queue.
func handlerFor() (cache.ResourceEventHandler, *queue.Queue[Notification]) {
	p := newPlain(nil)
	return Handler[Notification](p), p.q
}

// TestHandlerQueuesNotifications: adds and updates carry the key and the resourceVersion the
// listener read, in order.
func TestHandlerQueuesNotifications(t *testing.T) {
	t.Parallel()
	obj := func(rv string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns", "uid": "u", "resourceVersion": rv}}}
	}
	h, q := handlerFor()
	h.OnAdd(obj("7"), true)
	h.OnUpdate(obj("7"), obj("9"))
	q.Close()
	for _, want := range []Notification{{Kind: Add, RV: "7", Initial: true}, {Kind: Update, RV: "9"}} {
		n, ok := q.Pop(nil)
		if !ok || n.Kind != want.Kind || n.Key != "ns/x" || n.RV != want.RV || n.Initial != want.Initial {
			t.Fatalf("notification %+v, want kind %d key ns/x rv %s initial %v", n, want.Kind, want.RV, want.Initial)
		}
		if want.Kind == Update && (n.Old == nil || uidOf(n.Old) != "u") {
			t.Errorf("update without its old state: %+v", n)
		}
	}
}

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
			h, q := handlerFor()
			h.OnDelete(tt.deleted)
			q.Close()
			ev, ok := q.Pop(nil)
			if !ok {
				t.Fatal("no event queued")
			}
			if ev.Kind != Delete || ev.Key != tt.wantKey || (ev.Obj != nil) != tt.wantObj || ev.Unknown != tt.unknown {
				t.Fatalf("event = kind %d key %q obj %v unknown %v", ev.Kind, ev.Key, ev.Obj != nil, ev.Unknown)
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
		want     []Kind
	}{
		{"same uid", obj("a"), obj("a"), []Kind{Update}},
		{"new uid", obj("a"), obj("b"), []Kind{Delete, Add}},
		{"uid unknown", obj(""), obj("b"), []Kind{Update}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, q := handlerFor()
			h.OnUpdate(tt.old, tt.new)
			q.Close()
			var got []Notification
			for ev, ok := q.Pop(nil); ok; ev, ok = q.Pop(nil) {
				got = append(got, ev)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events, want %v", len(got), tt.want)
			}
			for i, ev := range got {
				if ev.Kind != tt.want[i] || ev.Key != "ns/x" {
					t.Errorf("event %d = kind %d key %q, want kind %d", i, ev.Kind, ev.Key, tt.want[i])
				}
			}
			if len(got) == 2 && (!got[0].Unknown || uidOf(got[0].Obj) != "a" || uidOf(got[1].Obj) != "b" || got[1].Initial) {
				t.Errorf("delete must carry the old object as final state unknown, the add the new one: %+v", got)
			}
		})
	}
}
