package engine

import (
	"container/list"
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/scripting"
)

// k8s.event records Events as client-go's recorder does: a repeat of an Event (same object,
// type, reason and message, from this runner) within eventWindow increments the count and
// lastTimestamp of the Event already recorded instead of creating another, so a script that
// reports the same condition on every resync does not flood the namespace.

const (
	// eventWindow is how long a recorded Event is aggregated into; client-go's correlator
	// keeps its cache for as long as it holds (LRU), the API server keeps Events one hour.
	eventWindow = 30 * time.Minute
	// eventCacheSize bounds the recorded Events remembered, least recently used first out.
	eventCacheSize = 4096
)

type eventKey struct {
	apiVersion, kind, namespace, name string
	uid                               types.UID
	eventType, reason, message        string
}

// recordedEvent is one Event this runner created.
type recordedEvent struct {
	key       eventKey
	namespace string
	name      string // the Event object's name
	count     int32  // written under the key's stripe lock
	first     time.Time
}

// eventCache remembers recorded Events; shared by every copy of a k8sClient.
type eventCache struct {
	// stripes serialize the calls recording one Event (by a hash of its key) from first look
	// to last write, so scripts repeating one Event at once create one and count every repeat:
	// a patch carries the new count, and two computed from one old count would lose one.
	stripes [64]sync.Mutex
	seed    maphash.Seed

	mu    sync.Mutex
	byKey map[eventKey]*list.Element
	lru   *list.List // of *recordedEvent, most recent first
}

func newEventCache() *eventCache {
	return &eventCache{byKey: map[eventKey]*list.Element{}, lru: list.New(), seed: maphash.MakeSeed()}
}

// lock holds the stripe of key until the returned func is called.
func (c *eventCache) lock(key eventKey) (unlock func()) {
	m := &c.stripes[maphash.Comparable(c.seed, key)%uint64(len(c.stripes))]
	m.Lock()
	return m.Unlock
}

// get returns the Event recorded for key within the window, and forgets an older one.
func (c *eventCache) get(key eventKey, now time.Time) (*recordedEvent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	rec := el.Value.(*recordedEvent)
	if now.Sub(rec.first) > eventWindow {
		c.remove(el)
		return nil, false
	}
	c.lru.MoveToFront(el)
	return rec, true
}

// forget drops rec, if it is still the one recorded for its key.
func (c *eventCache) forget(rec *recordedEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[rec.key]; ok && el.Value.(*recordedEvent) == rec {
		c.remove(el)
	}
}

func (c *eventCache) put(rec *recordedEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[rec.key]; ok {
		c.remove(el)
	}
	c.byKey[rec.key] = c.lru.PushFront(rec)
	if c.lru.Len() > eventCacheSize {
		c.remove(c.lru.Back())
	}
}

func (c *eventCache) remove(el *list.Element) {
	c.lru.Remove(el)
	delete(c.byKey, el.Value.(*recordedEvent).key)
}

// Event records an Event about obj, or counts a repeat of one recorded before.
func (c *k8sClient) Event(ctx context.Context, obj scripting.Object, eventType, reason, message string) error {
	u := &unstructured.Unstructured{Object: obj}
	key := eventKey{apiVersion: u.GetAPIVersion(), kind: u.GetKind(), namespace: u.GetNamespace(), name: u.GetName(),
		uid: u.GetUID(), eventType: firstNonEmpty(eventType, corev1.EventTypeNormal), reason: reason, message: message}
	now := c.now()
	if len(c.dryRun) > 0 {
		return c.createEvent(ctx, u, key, now) // nothing is stored, so nothing to count on
	}
	defer c.events.lock(key)()
	if rec, ok := c.events.get(key, now); ok {
		err := c.countEvent(ctx, rec, now)
		if !apierrors.IsNotFound(err) {
			return err
		}
		c.events.forget(rec) // the API server let the Event expire: record it anew
	}
	return c.createEvent(ctx, u, key, now)
}

func (c *k8sClient) createEvent(ctx context.Context, u *unstructured.Unstructured, key eventKey, now time.Time) error {
	ts := metav1.NewTime(now)
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: u.GetName() + ".", Namespace: firstNonEmpty(u.GetNamespace(), "default")},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(),
			Name: u.GetName(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(),
		},
		Type: key.eventType, Reason: key.reason, Message: key.message,
		Source:         corev1.EventSource{Component: c.fieldManager},
		FirstTimestamp: ts, LastTimestamp: ts, Count: 1,
	}
	content, err := toUnstructured(ev)
	if err != nil {
		return err
	}
	ri, err := c.resource("v1/events", ev.Namespace)
	if err != nil {
		return err
	}
	created, err := ri.Create(ctx, &unstructured.Unstructured{Object: content}, metav1.CreateOptions{DryRun: c.dryRun, FieldManager: c.fieldManager})
	c.logDryRun(err, "event", "v1/events", ev.Namespace, u.GetName(), "type", key.eventType, "reason", key.reason, "message", key.message)
	if err != nil || len(c.dryRun) > 0 {
		return err
	}
	c.events.put(&recordedEvent{key: key, namespace: ev.Namespace, name: created.GetName(), count: 1, first: now})
	return nil
}

// countEvent adds one to a recorded Event's count and moves its lastTimestamp.
func (c *k8sClient) countEvent(ctx context.Context, rec *recordedEvent, now time.Time) error {
	ri, err := c.resource("v1/events", rec.namespace)
	if err != nil {
		return err
	}
	patch := fmt.Appendf(nil, `{"count":%d,"lastTimestamp":%q}`, rec.count+1, now.UTC().Format(time.RFC3339))
	if _, err := ri.Patch(ctx, rec.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: c.fieldManager}); err != nil {
		return err
	}
	rec.count++
	return nil
}
