package offline

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// barrierSource is the harness's informer source: dynamicinformer's Factory on the
// in-memory cluster, exactly as the runner's, with every handler wrapped so that the
// cluster's barrier objects stop there (scripts never see them) and are counted. When each
// handler has seen barrier n, every change made before it was sent has been queued for the
// script: that is how the harness knows client-go's goroutines have nothing left to deliver.
type barrierSource struct {
	engine.Informers
	cluster *memcluster.Cluster

	mu      sync.Mutex
	handles map[*barrierHandle]struct{}
}

func newBarrierSource(inner engine.Informers, cluster *memcluster.Cluster) *barrierSource {
	return &barrierSource{Informers: inner, cluster: cluster, handles: map[*barrierHandle]struct{}{}}
}

func (s *barrierSource) Acquire(key dynamicinformer.Key) (engine.InformerHandle, error) {
	h, err := s.Informers.Acquire(key)
	if err != nil {
		return nil, err
	}
	bh := &barrierHandle{InformerHandle: h, source: s, key: key}
	bh.inf = &barrierInformer{SharedIndexInformer: h.Informer(), regs: map[cache.ResourceEventHandlerRegistration]*barrierHandler{}}
	s.mu.Lock()
	s.handles[bh] = struct{}{}
	s.mu.Unlock()
	return bh, nil
}

// barrierHandle is one reference on an informer, seen through the barrier wrapper.
type barrierHandle struct {
	engine.InformerHandle
	source *barrierSource
	key    dynamicinformer.Key
	inf    *barrierInformer
	once   sync.Once
}

func (h *barrierHandle) Informer() cache.SharedIndexInformer { return h.inf }

func (h *barrierHandle) Release() {
	h.once.Do(func() {
		h.source.mu.Lock()
		delete(h.source.handles, h)
		h.source.mu.Unlock()
		h.InformerHandle.Release()
	})
}

// barrierInformer wraps the handlers registered on a shared informer.
type barrierInformer struct {
	cache.SharedIndexInformer
	mu   sync.Mutex
	regs map[cache.ResourceEventHandlerRegistration]*barrierHandler
}

func (b *barrierInformer) AddEventHandler(next cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	h := &barrierHandler{next: next}
	reg, err := b.SharedIndexInformer.AddEventHandler(h)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.regs[reg] = h
	b.mu.Unlock()
	return reg, nil
}

func (b *barrierInformer) RemoveEventHandler(reg cache.ResourceEventHandlerRegistration) error {
	b.mu.Lock()
	delete(b.regs, reg)
	b.mu.Unlock()
	return b.SharedIndexInformer.RemoveEventHandler(reg)
}

func (b *barrierInformer) handlers() []*barrierHandler {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*barrierHandler, 0, len(b.regs))
	for _, h := range b.regs {
		out = append(out, h)
	}
	return out
}

// barrierHandler passes events on to the engine's handler, but for barriers, which it
// counts.
type barrierHandler struct {
	next cache.ResourceEventHandler
	seen atomic.Int64 // the last barrier delivered
}

func (h *barrierHandler) barrier(obj any) bool {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, _ := obj.(*unstructured.Unstructured)
	n, ok := memcluster.IsBarrier(u)
	if ok && n > h.seen.Load() {
		h.seen.Store(n) // events come one at a time per handler: no race between load and store
	}
	return ok
}

func (h *barrierHandler) OnAdd(obj any, initial bool) {
	if !h.barrier(obj) {
		h.next.OnAdd(obj, initial)
	}
}

func (h *barrierHandler) OnUpdate(oldObj, newObj any) {
	if !h.barrier(newObj) {
		h.next.OnUpdate(oldObj, newObj)
	}
}

func (h *barrierHandler) OnDelete(obj any) {
	if !h.barrier(obj) {
		h.next.OnDelete(obj)
	}
}

// flush returns once every handler registered now has been handed every change the cluster
// made before the call: it waits until each informer's watch is open, sends a barrier and
// waits until every handler registered before it was sent has seen it.
func (s *barrierSource) flush(ctx context.Context, w *waiter) error {
	s.mu.Lock()
	handles := make([]*barrierHandle, 0, len(s.handles))
	for h := range s.handles {
		handles = append(handles, h)
	}
	s.mu.Unlock()
	for _, h := range handles {
		k := h.key
		err := w.until(ctx, fmt.Sprintf("the watch of %s to open", k), func() bool {
			return s.cluster.Watching(k.GVR, k.Namespace, k.LabelSelector, k.FieldSelector)
		})
		if err != nil {
			return err
		}
	}
	// The handlers registered before the barrier is sent: one registered later (an audit
	// starting on its own goroutine) may miss it, and has its initial list, which its owner
	// waits for, instead.
	handlers := make([][]*barrierHandler, len(handles))
	for i, h := range handles {
		handlers[i] = h.inf.handlers()
	}
	n := s.cluster.Barrier()
	for i, h := range handles {
		for _, bh := range handlers[i] {
			err := w.until(ctx, fmt.Sprintf("the informer of %s to deliver its events", h.key), func() bool { return bh.seen.Load() >= n })
			if err != nil {
				return err
			}
		}
	}
	return nil
}
