package dynamicinformer

import (
	"log/slog"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jsinformer/jsinformer/shardrange"
)

// TestPartitionModeFromAnswers: the mode follows the list's shardInfo, and a server that
// echoes the selector but sends an object outside it is never trusted again.
func TestPartitionModeFromAnswers(t *testing.T) {
	t.Parallel()
	p := shardrange.Partition{Field: shardrange.Namespace, Mask: shardrange.Mask{^uint64(0), ^uint64(0)}}
	in, out := namespaceIn(t, p, true), namespaceIn(t, p, false)
	s := newPartition(p, slog.New(slog.DiscardHandler), nil)
	list := func(echo string) *unstructured.UnstructuredList {
		l := &unstructured.UnstructuredList{Object: map[string]any{"metadata": map[string]any{}}}
		if echo != "" {
			l.Object["metadata"] = map[string]any{"shardInfo": map[string]any{"selector": echo}}
		}
		return l
	}
	obj := func(ns string) map[string]any {
		return map[string]any{"metadata": map[string]any{"namespace": ns, "name": "x"}}
	}
	steps := []struct {
		do   func()
		want ShardMode
	}{
		{func() {}, ShardPending},
		{func() { s.answered(list("")) }, ShardClient},
		{func() {
			s.answered(list("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"))
		}, ShardClient},
		{func() { s.answered(list(p.Selector())) }, ShardServer},
		{func() { s.keep(obj(in)) }, ShardServer},
		{func() { s.keep(obj(out)) }, ShardClient},
		{func() { s.answered(list(p.Selector())) }, ShardClient},
	}
	for i, step := range steps {
		step.do()
		if st := s.status(); st.Mode != step.want {
			t.Fatalf("step %d: mode %q (%s), want %q", i, st.Mode, st.Reason, step.want)
		}
	}
	if st := s.status(); st.Received != 2 || st.Kept != 1 {
		t.Errorf("received %d, kept %d; want 2 and 1", st.Received, st.Kept)
	}
}

func namespaceIn(t *testing.T, p shardrange.Partition, in bool) string {
	t.Helper()
	for i := range 1000 {
		ns := strconv.Itoa(i) + "-ns" // FNV-1a's top bits barely follow a name's last bytes
		if p.Contains(shardrange.Hash(ns)) == in {
			return ns
		}
	}
	t.Fatal("no namespace found")
	return ""
}

// TestPartitionedProxyDropsOtherObjects: a partitioned informer's watch passes on only its
// partition's events, and so does the relist after "410 Gone", whose difference never names an
// object outside it.
func TestPartitionedProxyDropsOtherObjects(t *testing.T) {
	t.Parallel()
	p := shardrange.Partition{Field: shardrange.Namespace, Mask: shardrange.Mask{^uint64(0), ^uint64(0)}}
	in, out := namespaceIn(t, p, true), namespaceIn(t, p, false)
	obj := func(ns, name, rv string) *unstructured.Unstructured {
		u := cm(name, rv)
		u.SetNamespace(ns)
		return u
	}
	inner, ev := &scripted{}, &events{}
	lw := newTestListWatch(inner, ev)
	lw.shard = newPartition(p, slog.New(slog.DiscardHandler), nil)
	w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	live := inner.waitWatches(t, 1)
	live.Add(obj(out, "other", "2"))
	live.Add(obj(in, "ours", "3"))
	if got := next(t, w).Object.(*unstructured.Unstructured); got.GetName() != "ours" {
		t.Fatalf("first event passed on: %s/%s, want %s/ours", got.GetNamespace(), got.GetName(), in)
	}
	live.Action(watch.Error, goneEvent().Object)
	stream := inner.waitWatches(t, 2)
	for _, u := range []*unstructured.Unstructured{obj(out, "other", "2"), obj(out, "other2", "4"), obj(in, "ours", "3"), obj(in, "new", "5")} {
		stream.Add(u)
	}
	stream.Action(watch.Bookmark, initialEventsEnd("6"))
	// The relist's difference: "ours" is unchanged, "new" is added; then the bookmark.
	for i, want := range []string{"ADDED " + in + "/new", "BOOKMARK"} {
		got := next(t, w)
		u := got.Object.(*unstructured.Unstructured)
		s := string(got.Type)
		if got.Type != watch.Bookmark {
			s += " " + u.GetNamespace() + "/" + u.GetName()
		}
		if s != want {
			t.Fatalf("event %d after the relist = %s, want %s", i, s, want)
		}
	}
	if st := lw.shard.status(); st.Received != 6 || st.Kept != 3 {
		t.Errorf("received %d, kept %d; want 6 and 3", st.Received, st.Kept)
	}
}
