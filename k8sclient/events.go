package k8sclient

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

// k8s.event records core/v1 Events and counts repeats: a repeat of an Event (same object,
// type, reason and message, from this runner) within eventWindow increments the count and
// lastTimestamp of the Event already recorded instead of creating another, so a script that
// reports the same condition on every resync does not flood the namespace.
//
// Why core/v1 count and not events.k8s.io series: kubectl describe, kubectl get events and
// most dashboards read core/v1 Events and show count and lastTimestamp ("x20 over 5m"); the
// API server serves one storage under both APIs, so an Event written here is also an
// events.k8s.io Event (deprecatedCount, deprecatedLastTimestamp). A series written through
// events.k8s.io (as client-go v0.37's tools/events recorder does) is shown by kubectl too,
// but that recorder writes a series when it starts (the second occurrence) and then counts
// repeats in memory, sending them every 30 minutes (refreshExistingEventSeries): what the
// cluster shows lags what the script recorded by up to half an hour. Writing each repeat at
// once keeps a script's Events exact when its handler returns, which `runner test` and the
// examples check.
//
// Why it differs from client-go's tools/record correlator, on purpose: the correlator also
// drops Events past a token bucket per object (spam filter: a burst of 25, then one every five
// minutes) and merges ten Events that differ only in message into one "(combined from
// similar events)". A script chooses its Events and their messages; the runner does not
// silently drop or rewrite them. What bounds the writes is the handler that sends them, and
// repeats cost one PATCH each, as the correlator's do.

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

// eventCache remembers recorded Events; shared by every copy of a Client.
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
func (c *Client) Event(ctx context.Context, obj scripting.Object, eventType, reason, message string) error {
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

func (c *Client) createEvent(ctx context.Context, u *unstructured.Unstructured, key eventKey, now time.Time) error {
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
func (c *Client) countEvent(ctx context.Context, rec *recordedEvent, now time.Time) error {
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
