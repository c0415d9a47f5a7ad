package engine

import (
	"reflect"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine/internal/fanout"
	"github.com/jsinformer/jsinformer/engine/internal/queue"
)

// handlerFor is a client-go handler queueing sub's events onto q: a fanout with sub its only
// subscriber and no record, for tests that play client-go's part.
func handlerFor(sub *subscription, q *queue.Queue[event]) cache.ResourceEventHandler {
	sub.intake = q
	return fanout.Handler[event](sub)
}

// TestSubscriptionItems: each kind of the fanout's notification becomes the event of that
// kind for the subscription, carrying what the notification says.
func TestSubscriptionItems(t *testing.T) {
	t.Parallel()
	sub := &subscription{}
	obj, old := map[string]any{"n": "2"}, map[string]any{"n": "1"}
	tests := []struct {
		n    fanout.Notification
		want event
	}{
		{fanout.Notification{Kind: fanout.Add, Key: "ns/x", Obj: obj, RV: "7", Initial: true},
			event{kind: eventAdd, sub: sub, key: "ns/x", obj: obj, rv: "7", initial: true}},
		{fanout.Notification{Kind: fanout.Update, Key: "ns/x", Old: old, Obj: obj, RV: "8"},
			event{kind: eventUpdate, sub: sub, key: "ns/x", old: old, obj: obj, rv: "8"}},
		{fanout.Notification{Kind: fanout.Delete, Key: "ns/x", Obj: obj, Unknown: true},
			event{kind: eventDelete, sub: sub, key: "ns/x", obj: obj, unknown: true}},
	}
	for _, tt := range tests {
		got := sub.Item(tt.n)
		if !reflect.DeepEqual(got, tt.want) || got.sub != sub {
			t.Errorf("Item(%+v) = %+v, want %+v", tt.n, got, tt.want)
		}
	}
}
