package dynamicinformer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jsinformer/jsinformer/shardrange"
)

// ShardMode says who filters a partitioned informer's objects (Key.Partition).
type ShardMode string

const (
	// ShardOff means the informer is not partitioned; it caches every object.
	ShardOff ShardMode = ""
	// ShardPending means no answer has told yet whether the API server filters; the informer
	// filters every object itself meanwhile.
	ShardPending ShardMode = "pending"
	// ShardServer means the API server echoed the selector in a list's shardInfo, so it sends
	// only the partition's objects. The informer still checks each one (a hash per object)
	// and falls back to ShardClient should the server send one outside the partition.
	ShardServer ShardMode = "server"
	// ShardClient means the API server ignores the selector (its ShardedListAndWatch feature is
	// off, or it is older), so it sends every object and the informer drops those outside
	// the partition as they are decoded, before they are stored. Memory falls; the API
	// server's work, the network and the decoding do not.
	ShardClient ShardMode = "client"
)

// ShardStatus is what a partitioned informer learnt of its filtering, as Health reports it.
type ShardStatus struct {
	Partition shardrange.Partition
	Mode      ShardMode
	// Reason says which answer decided Mode.
	Reason string
	// Received counts the objects the API server sent (list items and watch events, bookmarks
	// aside); Kept those in the partition, which the informer handed on. In ShardServer mode
	// they are equal.
	Received, Kept uint64
}

// partition filters one partitioned informer's objects and learns, from the API server's
// answers, whether the server filters them already. Safe for concurrent use: the list decoder
// and the watch proxies call keep on the informer's goroutines; Health reads status. A nil
// *partition is an informer that is not partitioned: it keeps everything.
type partition struct {
	p        shardrange.Partition
	selector string // p.Selector(), sent with every list and watch
	logger   *slog.Logger
	// probe lists one object with the selector, for the shardInfo a streaming list lacks.
	probe func(context.Context) (runtime.Object, error)

	received, kept atomic.Uint64

	mu        sync.Mutex
	mode      ShardMode
	reason    string
	distrusts bool // the server sent an object outside the partition: never ShardServer again
}

// newPartition returns the filter of p, nil when p keeps everything.
func newPartition(p shardrange.Partition, logger *slog.Logger, probe func(context.Context) (runtime.Object, error)) *partition {
	if p.Full() {
		return nil
	}
	return &partition{p: p, selector: p.Selector(), logger: logger, probe: probe, mode: ShardPending,
		reason: "no list answered yet"}
}

// keep reports whether obj (an object's content) is in the partition, counting it.
func (s *partition) keep(obj map[string]any) bool {
	if s == nil {
		return true
	}
	var t tally
	ok := s.keepInto(&t)(obj)
	s.add(t)
	return ok
}

// tally counts the objects of one list read, added to the partition's counts only if the
// read succeeds: a list read again after a broken body counts its objects once.
type tally struct{ received, kept uint64 }

// keepInto is keep counting into t.
func (s *partition) keepInto(t *tally) func(map[string]any) bool {
	return func(obj map[string]any) bool {
		t.received++
		if s.p.Keeps(obj) {
			t.kept++
			return true
		}
		s.outside(obj)
		return false
	}
}

// add adds a read's counts; a no-op for nil.
func (s *partition) add(t tally) {
	if s == nil {
		return
	}
	s.received.Add(t.received)
	s.kept.Add(t.kept)
}

// keepEvent reports whether a watch event is to be handed on: bookmarks and errors are, and
// events of objects in the partition.
func (s *partition) keepEvent(ev watch.Event) bool {
	if s == nil || ev.Type == watch.Bookmark || ev.Type == watch.Error {
		return true
	}
	u, ok := ev.Object.(*unstructured.Unstructured)
	return !ok || s.keep(u.Object)
}

// filterList drops the items outside the partition from a list decoded without Keep.
func (s *partition) filterList(list *unstructured.UnstructuredList) {
	if s == nil {
		return
	}
	var t tally
	keep := s.keepInto(&t)
	kept := list.Items[:0]
	for _, item := range list.Items {
		if keep(item.Object) {
			kept = append(kept, item)
		}
	}
	clear(list.Items[len(kept):])
	list.Items = kept
	s.add(t)
}

// outside notes an object the server sent outside the partition: in ShardServer mode the
// server does not filter as it said it does, and the informer stops trusting it.
func (s *partition) outside(obj map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode != ShardServer {
		return
	}
	meta, _ := obj["metadata"].(map[string]any)
	s.set(ShardClient, fmt.Sprintf("the API server echoed the selector but sent %v/%v, outside it", meta["namespace"], meta["name"]))
	s.distrusts = true
}

// answered learns from a list's answer whether the server applied the selector: it did when
// the list's metadata.shardInfo.selector is the selector sent.
func (s *partition) answered(list runtime.Object) {
	if s == nil {
		return
	}
	u, ok := list.(*unstructured.UnstructuredList)
	if !ok {
		return
	}
	echo, found, _ := unstructured.NestedString(u.Object, "metadata", "shardInfo", "selector")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.distrusts:
	case !found:
		s.set(ShardClient, "the API server's list answer has no shardInfo: it ignores shardSelector (ShardedListAndWatch off, or older than Kubernetes 1.36)")
	case echo != s.selector:
		s.set(ShardClient, fmt.Sprintf("the API server applied another selector than the one sent: %q", echo))
	default:
		s.set(ShardServer, "the API server echoed the selector in the list's shardInfo")
	}
}

// set changes the mode, logging a change; called with mu held.
func (s *partition) set(mode ShardMode, reason string) {
	if s.mode != mode {
		s.logger.Info("partitioned informer filtering", "mode", string(mode), "reason", reason, "partition", s.p.String())
	}
	s.mode, s.reason = mode, reason
}

// beforeStreamingList probes the server with a one-object list when no answer has told yet
// whether it filters: a streaming list's answer carries no shardInfo. A failed probe leaves
// the mode pending (the informer filters every object meanwhile).
func (s *partition) beforeStreamingList(ctx context.Context) {
	if s == nil || s.probe == nil || s.status().Mode != ShardPending {
		return
	}
	out, err := s.probe(ctx)
	if err != nil {
		s.logger.Debug("shard probe failed", "error", err.Error())
		return
	}
	s.answered(out)
}

// status is the partition's ShardStatus; the zero ShardStatus (ShardOff) for nil.
func (s *partition) status() ShardStatus {
	if s == nil {
		return ShardStatus{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return ShardStatus{Partition: s.p, Mode: s.mode, Reason: s.reason, Received: s.received.Load(), Kept: s.kept.Load()}
}

// tweak adds the selector to a list's or watch's options.
func (s *partition) tweak(o *metav1.ListOptions) {
	if s != nil {
		o.ShardSelector = s.selector
	}
}
