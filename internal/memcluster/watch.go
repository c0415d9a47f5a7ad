package memcluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// watcher is one open watch. The cluster offers it every event under its mutex; the watcher
// keeps what matches in an unbounded buffer (a writer never waits for a reader) and its one
// goroutine, started by Watch and ended by Stop, hands the buffer on in order.
type watcher struct {
	c     *Cluster
	gvr   schema.GroupVersionResource
	res   *resource
	sel   *selection
	label string // the selectors as the client wrote them, to match informers' keys
	field string

	mu    sync.Mutex
	buf   []watch.Event
	ready chan struct{} // capacity 1: "the buffer may have events"
	stop  chan struct{}
	done  <-chan struct{} // the request's context: ending it ends the watch
	once  sync.Once
	out   chan watch.Event
}

var _ watch.Interface = (*watcher)(nil)

// Watch opens a watch (GET ?watch=1). With resourceVersion "" or "0" it starts with an ADDED
// event for every current object that matches; with a resourceVersion it replays the changes
// after it ("410 Gone" when that is older than the kept history). Objects that start or stop
// matching the selectors arrive as ADDED and DELETED, as from the server's watch cache.
func (c *Cluster) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	res, err := c.served(gvr, "watch")
	if err != nil {
		return nil, err
	}
	sel, err := newSelection(res, namespace, opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, err
	}
	w := &watcher{c: c, gvr: gvr, res: res, sel: sel, label: opts.LabelSelector, field: opts.FieldSelector,
		ready: make(chan struct{}, 1), stop: make(chan struct{}), out: make(chan watch.Event), done: ctx.Done()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.catchUp(w, opts.ResourceVersion); err != nil {
		return nil, err
	}
	c.watchers[w] = struct{}{}
	go w.run()
	return w, nil
}

// catchUp queues what happened before the watch opened; called with mu held.
func (c *Cluster) catchUp(w *watcher, rv string) error {
	if rv == "" || rv == "0" {
		objs := c.objects[w.gvr]
		for _, k := range sortedKeys(objs) {
			if w.sel.matches(objs[k]) {
				w.push(watch.Added, objs[k])
			}
		}
		return nil
	}
	from, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
	}
	if oldest, ok := c.history.oldest(); ok && from < oldest.rv-1 {
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, oldest.rv-1))
	}
	c.history.each(func(ev event) {
		if ev.rv > from {
			w.offer(ev)
		}
	})
	return nil
}

// offer passes ev on if it concerns the watch; called with the cluster's mutex held.
func (w *watcher) offer(ev event) {
	if ev.gvr != w.gvr {
		return
	}
	now := ev.typ != watch.Deleted && w.sel.matches(ev.obj)
	before := ev.prev != nil && w.sel.matches(ev.prev)
	switch {
	case now && before:
		w.push(watch.Modified, ev.obj)
	case now:
		w.push(watch.Added, ev.obj)
	case before && ev.typ == watch.Deleted:
		w.push(watch.Deleted, ev.obj)
	case before: // left the selection: its last state that matched, at this resourceVersion
		gone := ev.prev.DeepCopy()
		gone.SetResourceVersion(strconv.FormatInt(ev.rv, 10))
		w.push(watch.Deleted, gone)
	}
}

func (w *watcher) push(typ watch.EventType, obj *unstructured.Unstructured) {
	w.mu.Lock()
	w.buf = append(w.buf, watch.Event{Type: typ, Object: obj.DeepCopy()})
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

func (w *watcher) run() {
	defer close(w.out)
	for {
		w.mu.Lock()
		batch := w.buf
		w.buf = nil
		w.mu.Unlock()
		for _, ev := range batch {
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			case <-w.done:
				w.Stop()
				return
			}
		}
		select {
		case <-w.ready:
		case <-w.stop:
			return
		case <-w.done:
			w.Stop()
			return
		}
	}
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.out }

// Stop ends the watch; its channel is closed once its goroutine has returned.
func (w *watcher) Stop() {
	w.once.Do(func() {
		w.c.mu.Lock()
		delete(w.c.watchers, w)
		w.c.mu.Unlock()
		close(w.stop)
	})
}

// BarrierPrefix starts the names of barrier objects (see Barrier): no real object has it,
// since names cannot contain a NUL.
const BarrierPrefix = "\x00barrier-"

// IsBarrier reports whether obj is a barrier object, and its number.
func IsBarrier(obj *unstructured.Unstructured) (int64, bool) {
	if obj == nil || !strings.HasPrefix(obj.GetName(), BarrierPrefix) {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(obj.GetName(), BarrierPrefix), 10, 64)
	return n, err == nil
}

// Barrier sends every open watch an ADDED and a DELETED event for a barrier object that
// exists nowhere else, after every event already sent, and returns its number. A consumer
// that sees barrier n on a watch has seen every change made before Barrier returned n.
// Consumers must drop barrier objects (IsBarrier).
func (c *Cluster) Barrier() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.barriers++
	for w := range c.watchers {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(w.res.gvk())
		obj.SetName(BarrierPrefix + strconv.FormatInt(c.barriers, 10))
		obj.SetNamespace(w.sel.namespace)
		obj.SetResourceVersion(strconv.FormatInt(c.rv, 10))
		w.push(watch.Added, obj)
		w.push(watch.Deleted, obj)
	}
	return c.barriers
}

// Watching reports whether a watch with exactly these parameters is open: the watch of an
// informer keyed by them.
func (c *Cluster) Watching(gvr schema.GroupVersionResource, namespace, labelSelector, fieldSelector string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for w := range c.watchers {
		if w.gvr == gvr && w.sel.namespace == namespace && w.label == labelSelector && w.field == fieldSelector {
			return true
		}
	}
	return false
}
