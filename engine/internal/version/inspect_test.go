package version

import (
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/internal/scriptcache"
)

// TestInspectNil: a version built without inspection (unit tests) records nothing, is never
// held and has no subscriptions.
func TestInspectNil(t *testing.T) {
	t.Parallel()
	var in *Inspect
	ev := Event{Kind: EventAdd, Sub: &Subscription{Cache: &scriptcache.View{Resource: "v1/configmaps"}}, Key: "ns/x"}
	if in.Recorder() != nil || in.Subscriptions() != nil || in.Held() != 0 || !in.WaitUnpaused("a.js", nil) || in.TraceStart("a.js", "h", ev) != nil {
		t.Fatal("a nil Inspect records, holds or lists something")
	}
}

// TestInspectHoldsWhilePaused: the worker is held while its script is paused, counted in the
// backlog (Held) meanwhile, and let go by a resume, or by abort (false).
func TestInspectHoldsWhilePaused(t *testing.T) {
	t.Parallel()
	pauses := inspect.NewPauses()
	in := NewInspect(trace.NewWorker(nil, nil), pauses)
	if !in.WaitUnpaused("a.js", nil) {
		t.Fatal("held while not paused")
	}
	tests := []struct {
		name    string
		release func(abort chan struct{})
		want    bool
	}{
		{"resumed", func(chan struct{}) { pauses.Resume("a.js") }, true},
		{"aborted", func(abort chan struct{}) { close(abort) }, false},
	}
	for _, tt := range tests {
		pauses.Pause("a.js")
		abort := make(chan struct{})
		got := make(chan bool)
		go func() { got <- in.WaitUnpaused("a.js", abort) }()
		deadline := time.Now().Add(10 * time.Second)
		for in.Held() != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the held event never counted", tt.name)
			}
			time.Sleep(time.Millisecond)
		}
		tt.release(abort)
		if ok := <-got; ok != tt.want || in.Held() != 0 {
			t.Errorf("%s: WaitUnpaused = %v with %d held after, want %v with 0", tt.name, ok, in.Held(), tt.want)
		}
	}
	if !in.WaitUnpaused("b.js", nil) {
		t.Error("another script held by a.js's pause")
	}
}

// TestInspectSubscriptions: readers see the subscriptions once the loader publishes them.
func TestInspectSubscriptions(t *testing.T) {
	t.Parallel()
	in := NewInspect(nil, nil)
	if in.Subscriptions() != nil {
		t.Fatal("subscriptions before subscribing")
	}
	subs := []*Subscription{{}, {}}
	in.SetSubscriptions(subs)
	if got := in.Subscriptions(); len(got) != 2 || got[0] != subs[0] || got[1] != subs[1] {
		t.Fatalf("Subscriptions = %v, want %v", got, subs)
	}
}
