package version

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// TestSubscriptionItems: each kind of the fanout's notification becomes the event of that
// kind for the subscription, carrying what the notification says.
func TestSubscriptionItems(t *testing.T) {
	t.Parallel()
	sub := &Subscription{}
	obj, old := map[string]any{"n": "2"}, map[string]any{"n": "1"}
	tests := []struct {
		n    fanout.Notification
		want Event
	}{
		{fanout.Notification{Kind: fanout.Add, Key: "ns/x", Obj: obj, RV: "7", Initial: true},
			Event{Kind: EventAdd, Sub: sub, Key: "ns/x", Obj: obj, RV: "7", Initial: true}},
		{fanout.Notification{Kind: fanout.Update, Key: "ns/x", Old: old, Obj: obj, RV: "8"},
			Event{Kind: EventUpdate, Sub: sub, Key: "ns/x", Old: old, Obj: obj, RV: "8"}},
		{fanout.Notification{Kind: fanout.Delete, Key: "ns/x", Obj: obj, Unknown: true},
			Event{Kind: EventDelete, Sub: sub, Key: "ns/x", Obj: obj, Unknown: true}},
	}
	for _, tt := range tests {
		got := sub.Item(tt.n)
		if !reflect.DeepEqual(got, tt.want) || got.Sub != sub {
			t.Errorf("Item(%+v) = %+v, want %+v", tt.n, got, tt.want)
		}
	}
}

// TestHandlerReadsResourceVersion: adds and updates through a fanout's client-go handler carry
// the resourceVersion the listener read with the key, and an event without one reads it from
// its object.
func TestHandlerReadsResourceVersion(t *testing.T) {
	t.Parallel()
	obj := func(rv string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns", "uid": "u", "resourceVersion": rv}}}
	}
	q := queue.New[Event]()
	h := fanout.Handler[Event](&Subscription{Queue: q})
	h.OnAdd(obj("7"), true)
	h.OnUpdate(obj("7"), obj("9"))
	q.Close()
	for _, want := range []string{"7", "9"} {
		ev, ok := q.Pop(nil)
		if !ok || ev.RV != want || ev.ResourceVersion() != want {
			t.Fatalf("event RV %q, ResourceVersion() %q, want %q", ev.RV, ev.ResourceVersion(), want)
		}
	}
	replayed := Event{Kind: EventReplay, Obj: obj("11").Object}
	if got := replayed.ResourceVersion(); got != "11" {
		t.Errorf("ResourceVersion() of an event the listener did not read = %q, want 11", got)
	}
	if got := ResourceVersionOf(nil); got != "" {
		t.Errorf("ResourceVersionOf(nil) = %q, want empty", got)
	}
}

// TestOverload: the overload policy matches events on subscription and key, folds only
// updates, and a fold keeps the old state it had while taking the new object and its values.
func TestOverload(t *testing.T) {
	t.Parallel()
	a, b := &Subscription{}, &Subscription{}
	refs := []struct {
		ev     Event
		ok     bool
		update bool
	}{
		{Event{Kind: EventUpdate, Sub: a, Key: "ns/x"}, true, true},
		{Event{Kind: EventAdd, Sub: a, Key: "ns/x"}, true, false},
		{Event{Kind: EventSynced}, false, false},
		{Event{Kind: EventSchedule, Due: 1}, false, false},
	}
	for _, tt := range refs {
		if _, ok := Overload.Object(tt.ev); ok != tt.ok {
			t.Errorf("Object(%v) ok = %v, want %v", tt.ev.Kind, ok, tt.ok)
		}
		if got := Overload.Update(tt.ev); got != tt.update {
			t.Errorf("Update(%v) = %v, want %v", tt.ev.Kind, got, tt.update)
		}
	}
	x1, _ := Overload.Object(Event{Sub: a, Key: "ns/x"})
	x2, _ := Overload.Object(Event{Sub: a, Key: "ns/x", Kind: EventUpdate})
	y, _ := Overload.Object(Event{Sub: a, Key: "ns/y"})
	xb, _ := Overload.Object(Event{Sub: b, Key: "ns/x"})
	if x1 != x2 || x1 == y || x1 == xb {
		t.Errorf("object refs: same object %v, other key %v, other subscription %v; want equal, different, different", x1 == x2, x1 != y, x1 != xb)
	}
	old, first, last := map[string]any{"n": "0"}, map[string]any{"n": "1"}, map[string]any{"n": "2"}
	into := Event{Kind: EventUpdate, Sub: a, Key: "ns/x", Old: old, Obj: first, Values: [][]string{{"1"}}}
	Overload.Fold(&into, Event{Kind: EventUpdate, Sub: a, Key: "ns/x", Old: first, Obj: last, Values: [][]string{{"2"}}})
	want := Event{Kind: EventUpdate, Sub: a, Key: "ns/x", Old: old, Obj: last, Values: [][]string{{"2"}}}
	if !reflect.DeepEqual(into, want) {
		t.Errorf("Fold = %+v, want %+v", into, want)
	}
}

// TestStateString names every state the views show, and no other.
func TestStateString(t *testing.T) {
	t.Parallel()
	for s, want := range map[State]string{StateSyncing: "syncing", StateCurrent: "current", StateDraining: "draining", StateDone: "done", StateDone + 1: "unknown"} {
		if got := s.String(); got != want {
			t.Errorf("State(%d).String() = %q, want %q", s, got, want)
		}
	}
}
