package fanout

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// fanoutInformer is a real client-go informer listing n ConfigMaps and then following a
// fake watch the test writes to.
type fanoutInformer struct {
	inf cache.SharedIndexInformer
	w   *watch.FakeWatcher
}

func newFanoutInformer(t testing.TB, n, chanSize int) *fanoutInformer {
	t.Helper()
	fi := &fanoutInformer{w: watch.NewFakeWithChanSize(chanSize, false)}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMapList"}}
			list.SetResourceVersion("1")
			for i := range n {
				list.Items = append(list.Items, *fanoutObject(i, 0, 1))
			}
			return list, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fi.w, nil },
	}
	fi.inf = cache.NewSharedIndexInformer(listingOnly{lw}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		fi.inf.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return fi
}

// listingOnly makes the reflector list rather than stream.
type listingOnly struct{ *cache.ListWatch }

func (listingOnly) IsWatchListSemanticsUnSupported() bool { return true }

func fanoutObject(i, generation, rv int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "ns",
			"uid": fmt.Sprintf("%d-%d", i, generation), "resourceVersion": fmt.Sprint(rv)}}}
}

// fanoutSink consumes one subscription's queue as a worker would, checking that its events
// make sense in order: an add of an object it does not hold, an update whose old state is the
// one it was last given, a delete of an object it holds.
type fanoutSink struct {
	*plain
	member   *Member[Notification]
	mu       sync.Mutex
	state    map[string]string // key → resourceVersion
	handled  int
	initial  int
	problems []string
	done     chan struct{}
}

func newFanoutSink(fi *fanoutInformer) *fanoutSink {
	s := &fanoutSink{plain: newPlain(fi.inf), state: map[string]string{}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			ev, ok := s.q.Pop(nil)
			if !ok {
				return
			}
			s.apply(ev)
		}
	}()
	return s
}

func (s *fanoutSink) apply(ev Notification) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handled++
	have, held := s.state[ev.Key]
	switch ev.Kind {
	case Add:
		if held {
			s.problems = append(s.problems, fmt.Sprintf("add of %s at %s, held at %s", ev.Key, ev.RV, have))
		}
		if ev.Initial {
			s.initial++
		}
		s.state[ev.Key] = ev.RV
	case Update:
		if old := rvOf(ev.Old); !held || old != have {
			s.problems = append(s.problems, fmt.Sprintf("update of %s from %s, held at %q", ev.Key, old, have))
		}
		s.state[ev.Key] = ev.RV
	case Delete:
		if !held {
			s.problems = append(s.problems, "delete of "+ev.Key+", not held")
		}
		delete(s.state, ev.Key)
	}
}

func (s *fanoutSink) snapshot() (state map[string]string, handled int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	state = make(map[string]string, len(s.state))
	for k, rv := range s.state {
		state[k] = rv
	}
	return state, s.handled
}

// storeState is what the informer's cache holds: key → resourceVersion.
func storeState(inf cache.SharedIndexInformer) map[string]string {
	out := map[string]string{}
	for _, obj := range inf.GetStore().List() {
		u := obj.(*unstructured.Unstructured)
		out[u.GetNamespace()+"/"+u.GetName()] = u.GetResourceVersion()
	}
	return out
}

// TestFanoutSubscribersJoinAndLeaveMidStream: versions subscribe to one informer while it
// changes — before its initial list, after it, in the middle of a stream of updates, deletes
// and re-creations — and one leaves half-way. Each is given every object exactly once (the
// record's initial adds, or the stream), every change after that in order, and ends with the
// informer's state; the one that left is given nothing after it left; when the last leaves the
// registration goes, and a version subscribing after that is given the whole cache again.
func TestFanoutSubscribersJoinAndLeaveMidStream(t *testing.T) {
	t.Parallel()
	const objects, changes = 300, 3000
	fi := newFanoutInformer(t, objects, changes)
	var fans Registry[Notification]
	subscribe := func() *fanoutSink {
		s := newFanoutSink(fi)
		m, err := fans.Subscribe(s)
		if err != nil {
			t.Fatal(err)
		}
		s.member = m
		return s
	}
	early := subscribe() // before the informer has listed, most likely: client-go's replay
	fanoutWait(t, "the first subscription to sync", func() bool {
		select {
		case <-early.member.Synced():
			return true
		default:
			return false
		}
	})
	leaver := subscribe() // after the sync: the record's initial adds

	var joined []*fanoutSink
	var leftAt int
	rv := 2
	generation := make([]int, objects)
	present := make([]bool, objects)
	for i := range present {
		present[i] = true
	}
	for c := range changes {
		i := (c * 7) % objects
		switch {
		case c%97 == 0 && present[i]:
			fi.w.Delete(fanoutObject(i, generation[i], rv))
			present[i] = false
		case !present[i]:
			generation[i]++ // a new uid: another object under the same key
			fi.w.Add(fanoutObject(i, generation[i], rv))
			present[i] = true
		case c%89 == 0:
			generation[i]++ // recreated while the watch was down: an update joining two uids
			fi.w.Modify(fanoutObject(i, generation[i], rv))
		default:
			fi.w.Modify(fanoutObject(i, generation[i], rv))
		}
		rv++
		if c%500 == 250 {
			joined = append(joined, subscribe())
		}
		if c == changes/2 {
			if err := fans.Unsubscribe(leaver.member); err != nil {
				t.Fatal(err)
			}
			fanoutWait(t, "the subscriber that left to handle its queue", leaver.q.Idle)
			_, leftAt = leaver.snapshot()
		}
	}

	want := func() map[string]string { return storeState(fi.inf) }
	for n, s := range append([]*fanoutSink{early}, joined...) {
		fanoutWait(t, fmt.Sprintf("subscriber %d to reach the informer's state", n), func() bool {
			got, _ := s.snapshot()
			return fmt.Sprint(got) == fmt.Sprint(want())
		})
		<-s.member.Synced() // closed: every subscriber was given the initial list
	}
	if _, handled := leaver.snapshot(); handled+leaver.q.Len() != leftAt {
		t.Errorf("the subscriber that left was given %d events, %d when it left", handled+leaver.q.Len(), leftAt)
	}
	if leftAt < objects {
		t.Errorf("the subscriber that left had been given %d events, fewer than the %d objects", leftAt, objects)
	}
	for _, s := range joined {
		if s.initial == 0 {
			t.Errorf("a subscriber joining mid-stream was given no initial add")
		}
	}
	for _, s := range append([]*fanoutSink{early, leaver}, joined...) {
		if err := fans.Unsubscribe(s.member); err != nil {
			t.Fatal(err)
		}
		s.q.Close()
		<-s.done
		for _, p := range s.problems {
			t.Error(p)
		}
	}
	if len(fans.by) != 0 {
		t.Fatalf("%d fanouts left after the last subscriber left", len(fans.by))
	}

	again := subscribe() // a fresh registration: client-go replays its cache
	fanoutWait(t, "a subscriber after the last left to be given the cache", func() bool {
		got, _ := again.snapshot()
		return fmt.Sprint(got) == fmt.Sprint(want())
	})
	if err := fans.Unsubscribe(again.member); err != nil {
		t.Fatal(err)
	}
	again.q.Close()
	<-again.done
}

func fanoutWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// rvOf is obj's metadata.resourceVersion.
func rvOf(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}
