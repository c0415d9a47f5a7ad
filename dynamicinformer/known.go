package dynamicinformer

import (
	"runtime"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// known mirrors, key by key, what one informer's reflector has been handed: every list it got
// and every watch event the proxy passed on. A relist done by the proxy (watchproxy.go) diffs
// the server's snapshot against it to tell which objects were deleted meanwhile. It holds
// each object's resourceVersion, read before the object was handed on (the reflector's
// transform writes to objects afterwards), and the object itself for a delete's last state.
type known struct {
	mu   sync.Mutex
	objs map[objKey]knownObject
}

// objKey is an object's namespace and name; a struct rather than "ns/name" so that recording
// a watch event allocates no key (its strings are the object's own).
type objKey struct{ namespace, name string }

type knownObject struct {
	rv  string
	obj *unstructured.Unstructured
}

func newKnown() *known { return &known{objs: map[objKey]knownObject{}} }

func (k *known) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.objs = map[objKey]knownObject{}
}

// addList records the items of a list page.
func (k *known) addList(list *unstructured.UnstructuredList) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range list.Items {
		u := &list.Items[i]
		k.objs[objectKey(u)] = knownObject{rv: u.GetResourceVersion(), obj: u}
	}
}

// apply records an event about to be handed on.
func (k *known) apply(ev watch.Event) {
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		k.objs[objectKey(u)] = knownObject{rv: u.GetResourceVersion(), obj: u}
	case watch.Deleted:
		delete(k.objs, objectKey(u))
	}
}

// diff turns a fresh snapshot of the server into the events that bring the reflector's state
// to it: an add for what is new, an update for what changed, and a delete, marked with
// FinalStateUnknown, for what is gone. Unchanged objects produce nothing. It records the
// result as known.
func (k *known) diff(snapshot []*unstructured.Unstructured) []watch.Event {
	k.mu.Lock()
	defer k.mu.Unlock()
	next := make(map[objKey]knownObject, len(snapshot))
	var out []watch.Event
	for _, u := range snapshot {
		key, rv := objectKey(u), u.GetResourceVersion()
		next[key] = knownObject{rv: rv, obj: u}
		old, ok := k.objs[key]
		switch {
		case !ok:
			out = append(out, watch.Event{Type: watch.Added, Object: u})
		case old.rv != rv:
			out = append(out, watch.Event{Type: watch.Modified, Object: u})
		}
	}
	for key, old := range k.objs {
		if _, ok := next[key]; !ok {
			out = append(out, watch.Event{Type: watch.Deleted, Object: finalStateUnknown(old.obj)})
		}
	}
	k.objs = next
	return out
}

func objectKey(u *unstructured.Unstructured) objKey {
	return objKey{namespace: u.GetNamespace(), name: u.GetName()}
}

// unknownFinal holds the deletes the proxy inferred from a relist, by weak pointer, so the
// mark goes with the object and never keeps it alive.
var unknownFinal sync.Map // weak.Pointer[unstructured.Unstructured] -> struct{}

// finalStateUnknown returns a new handle on obj's last known state, marked so that
// FinalStateUnknown reports it.
func finalStateUnknown(obj *unstructured.Unstructured) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: obj.Object}
	wp := weak.Make(u)
	unknownFinal.Store(wp, struct{}{})
	runtime.AddCleanup(u, func(wp weak.Pointer[unstructured.Unstructured]) { unknownFinal.Delete(wp) }, wp)
	return u
}

// FinalStateUnknown reports whether obj, given to an informer handler's OnDelete, is the last
// known state of an object whose deletion the informer did not see but inferred from a
// relist: client-go hands those over as cache.DeletedFinalStateUnknown; the Factory's own
// relists (see Backoff) hand over the object, marked this way. Objects are shared: the mark
// says nothing about obj's content, which may be stale.
func FinalStateUnknown(obj any) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil {
		return false
	}
	_, marked := unknownFinal.Load(weak.Make(u))
	return marked
}
