package dynamicinformer

import (
	"log/slog"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// watchListOff is kube-apiserver's answer to sendInitialEvents with its WatchList feature off.
var watchListOff = apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", field.ErrorList{
	field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")})

// After "410 Gone" on a server that refuses streaming lists, the proxy hands the 410 to the
// reflector (which lists) without reporting a failure, and asks no streaming list again.
func TestProxyPassesGoneOnWhereStreamingListsAreRefused(t *testing.T) {
	t.Parallel()
	inner, ev := &scripted{errs: []error{nil, watchListOff}}, &events{}
	lw := newTestListWatch(inner, ev)
	lw.support = &streamingSupport{logger: slog.New(slog.DiscardHandler)}
	for round := 1; round <= 2; round++ {
		w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "1"})
		if err != nil {
			t.Fatal(err)
		}
		inner.waitWatches(t, round).Action(watch.Error, goneEvent().Object)
		if got := next(t, w); got.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(got.Object)) {
			t.Fatalf("round %d: got %s %v, want the 410 passed on", round, got.Type, got.Object)
		}
		w.Stop()
	}
	// Calls: watch, refused streaming list, watch; the second 410 asked no streaming list.
	inner.mu.Lock()
	calls := inner.calls
	inner.mu.Unlock()
	if calls != 3 {
		t.Errorf("requests = %d, want 3: no streaming list after the refusal", calls)
	}
	if kinds := ev.kinds(); len(kinds) != 0 {
		t.Errorf("health events %v: a refused streaming list is no failure", kinds)
	}
	if !lw.IsWatchListSemanticsUnSupported() {
		t.Error("informers made after the refusal would still try streaming lists")
	}
}

func TestIsStreamingRefused(t *testing.T) {
	t.Parallel()
	other := apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", field.ErrorList{
		field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden for list")})
	for _, tc := range []struct {
		err  error
		want bool
	}{{watchListOff, true}, {other, false}, {expired, false}, {badRequest, false}, {nil, false}} {
		if got := isStreamingRefused(tc.err); got != tc.want {
			t.Errorf("isStreamingRefused(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
