package dynamicinformer

import (
	"log/slog"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
