package dynamicinformer

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func cm(name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": rv}}}
}

func goneEvent() watch.Event {
	status := apierrors.NewResourceExpired("too old resource version").Status()
	return watch.Event{Type: watch.Error, Object: &status}
}

func initialEventsEnd(rv string) *unstructured.Unstructured {
	u := cm("", rv)
	u.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	return u
}

// waitWatches polls until the fake has opened n watches.
func (s *scripted) waitWatches(t *testing.T, n int) *watch.FakeWatcher {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		if len(s.watches) >= n {
			w := s.watches[n-1]
			s.mu.Unlock()
			return w
		}
		s.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("want %d watches opened", n)
		}
		time.Sleep(time.Millisecond)
	}
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the proxy closed its stream")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event from the proxy")
	}
	return watch.Event{}
}

// After "410 Gone" the proxy relists on a streaming list and passes on only the difference
// against what the reflector was handed, then the snapshot's resourceVersion, then live events.
func TestProxyRelistsOnGone(t *testing.T) {
	t.Parallel()
	inner, ev := &scripted{}, &events{}
	lw := newTestListWatch(inner, ev)
	lw.known.addList(&unstructured.UnstructuredList{Items: []unstructured.Unstructured{*cm("same", "1"), *cm("changed", "1"), *cm("gone", "1")}})

	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	inner.waitWatches(t, 1).Action(watch.Error, goneEvent().Object)
	stream := inner.waitWatches(t, 2)
	for _, u := range []*unstructured.Unstructured{cm("same", "1"), cm("changed", "5"), cm("new", "6")} {
		stream.Add(u)
	}
	stream.Action(watch.Bookmark, initialEventsEnd("7"))
	stream.Modify(cm("new", "8"))

	want := []struct {
		typ  watch.EventType
		name string
		rv   string
	}{
		{watch.Modified, "changed", "5"}, {watch.Added, "new", "6"}, {watch.Deleted, "gone", "1"},
		{watch.Bookmark, "", "7"}, {watch.Modified, "new", "8"},
	}
	for i, w0 := range want {
		got := next(t, w)
		u := got.Object.(*unstructured.Unstructured)
		if got.Type != w0.typ || u.GetName() != w0.name || u.GetResourceVersion() != w0.rv {
			t.Fatalf("event %d = %s %s@%s, want %s %s@%s", i, got.Type, u.GetName(), u.GetResourceVersion(), w0.typ, w0.name, w0.rv)
		}
		if got.Type == watch.Deleted && !FinalStateUnknown(u) {
			t.Errorf("the inferred delete of %s is not marked FinalStateUnknown", u.GetName())
		}
		if got.Type != watch.Deleted && FinalStateUnknown(u) {
			t.Errorf("%s %s is marked FinalStateUnknown", got.Type, u.GetName())
		}
	}
	if h := lw.health.snapshot(); h.Relists != 0 || !h.Healthy {
		t.Errorf("health = %+v; the relist is the first list here", h)
	}
}

// A relist that cannot complete hands the "410 Gone" to the reflector, which relists itself.
func TestProxyPassesGoneOnWhenItCannotRelist(t *testing.T) {
	t.Parallel()
	inner := &scripted{}
	lw := newTestListWatch(inner, &events{})
	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	inner.waitWatches(t, 1).Action(watch.Error, goneEvent().Object)
	inner.waitWatches(t, 2).Stop() // the streaming list ends before its bookmark
	got := next(t, w)
	if got.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(got.Object)) {
		t.Fatalf("got %s %v, want the 410 passed on", got.Type, got.Object)
	}
}

// A stream that ends at once without an event is reopened from the same resourceVersion.
func TestProxyReopensShortWatches(t *testing.T) {
	t.Parallel()
	inner := &scripted{}
	lw := newTestListWatch(inner, &events{})
	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "3"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	inner.waitWatches(t, 1).Stop()
	inner.waitWatches(t, 2).Modify(cm("a", "4"))
	if got := next(t, w); got.Type != watch.Modified {
		t.Fatalf("got %s, want the reopened stream's event", got.Type)
	}
}

// "410 Gone" as the answer to the watch request itself is relisted the same way.
func TestProxyRelistsWhenTheWatchRequestIsGone(t *testing.T) {
	t.Parallel()
	inner := &scripted{errs: []error{expired}}
	lw := newTestListWatch(inner, &events{})
	lw.known.addList(&unstructured.UnstructuredList{Items: []unstructured.Unstructured{*cm("gone", "1")}})
	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatalf("WatchWithContext = %v; want the proxy to relist", err)
	}
	defer w.Stop()
	stream := inner.waitWatches(t, 1) // the failed request opened none
	stream.Action(watch.Bookmark, initialEventsEnd("9"))
	if got := next(t, w); got.Type != watch.Deleted || !FinalStateUnknown(got.Object) {
		t.Fatalf("got %s, want the inferred delete", got.Type)
	}
	if got := next(t, w); got.Type != watch.Bookmark {
		t.Fatalf("got %s, want the snapshot's bookmark", got.Type)
	}
}

// A proxy stopped while it reopens a watch through an outage stops retrying at once, though
// the context it was opened with lives on.
func TestStoppedProxyStopsRetrying(t *testing.T) {
	t.Parallel()
	inner := &scripted{}
	lw := newTestListWatch(inner, &events{})
	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "3"})
	if err != nil {
		t.Fatal(err)
	}
	inner.mu.Lock()
	for range 100_000 {
		inner.errs = append(inner.errs, errRefused)
	}
	inner.mu.Unlock()
	inner.waitWatches(t, 1).Stop() // a short watch: the proxy reopens it, and every try fails
	deadline := time.Now().Add(5 * time.Second)
	for inner.callCount() < 5 {
		if time.Now().After(deadline) {
			t.Fatal("the proxy did not retry")
		}
		time.Sleep(time.Millisecond)
	}
	w.Stop()
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Fatal("an event after Stop")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stopped proxy is still retrying: its stream never closed")
	}
	after := inner.callCount()
	time.Sleep(50 * time.Millisecond) // fastBackoff retries every few ms: 50ms would see more
	if n := inner.callCount(); n != after {
		t.Errorf("%d more tries after the proxy stopped", n-after)
	}
}

func (s *scripted) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// A stream whose connection was found dead marks the informer failing and ends without
// passing the error on, so the reflector watches again from where it was; other stream
// errors are passed on as they came.
func TestProxyReportsLostConnections(t *testing.T) {
	t.Parallel()
	reporter := apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding")
	cases := []struct {
		name    string
		err     error
		failing bool
	}{
		{"ping unanswered", errors.New("http2: client connection lost"), true},
		{"malformed frame", errors.New("invalid character 'x' looking for beginning of value"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			inner, ev := &scripted{}, &events{}
			lw := newTestListWatch(inner, ev)
			w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "3"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			stream := inner.waitWatches(t, 1)
			stream.Modify(cm("a", "4"))
			next(t, w)
			stream.Error(reporter.AsObject(fmt.Errorf("unable to decode an event from the watch stream: %w", c.err)))
			got, open := <-w.ResultChan()
			if c.failing {
				if open {
					t.Fatalf("got %s %v, want the stream closed quietly", got.Type, got.Object)
				}
				if kinds := ev.wait(t, 1); kinds[0].Kind != Failing || !strings.Contains(kinds[0].Err.Error(), "client connection lost") {
					t.Fatalf("health events %v, want Failing with the cause", kinds)
				}
				return
			}
			if !open || got.Type != watch.Error {
				t.Fatalf("got %s (open %v), want the error passed on", got.Type, open)
			}
			if kinds := ev.kinds(); len(kinds) != 0 {
				t.Fatalf("health events %v, want none", kinds)
			}
		})
	}
}
