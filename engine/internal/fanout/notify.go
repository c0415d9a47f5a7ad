package fanout

import (
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/scripting"
)

// remember records key's state as last handed out; f.mu held. Without a record (Handler's
// fanout) it does nothing.
func (f *fanout[T]) remember(key string, u scripting.Object, rv string) {
	if f.objs != nil {
		f.objs[key] = delivered{obj: u, rv: rv}
	}
}

// OnAdd records obj and queues its add for every subscriber.
func (f *fanout[T]) OnAdd(obj any, initial bool) {
	u, key, rv, ok := unwrapMeta(obj)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remember(key, u, rv)
	n := Notification{Kind: Add, Key: key, Obj: u, RV: rv, Initial: initial}
	for _, m := range f.subs {
		m.intake.Push(m.sub.Item(n))
	}
}

// OnUpdate records the new state and queues the update, or a delete and an add when the key
// now names another object (recreated).
func (f *fanout[T]) OnUpdate(oldObj, newObj any) {
	o, _, _ := unwrap(oldObj)
	u, key, rv, ok := unwrapMeta(newObj)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remember(key, u, rv)
	if recreated(o, u) {
		del := Notification{Kind: Delete, Key: key, Obj: o, Unknown: true}
		add := Notification{Kind: Add, Key: key, Obj: u, RV: rv}
		for _, m := range f.subs {
			m.intake.PushAll([]T{m.sub.Item(del), m.sub.Item(add)})
		}
		return
	}
	n := Notification{Kind: Update, Key: key, Old: o, Obj: u, RV: rv}
	for _, m := range f.subs {
		m.intake.Push(m.sub.Item(n))
	}
}

// OnDelete forgets the object and queues its delete; a tombstone's final state is unknown.
func (f *fanout[T]) OnDelete(obj any) {
	var (
		u       scripting.Object
		key     string
		unknown bool
	)
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		u, _, _ = unwrap(tomb.Obj)
		key, unknown = tomb.Key, true
	} else {
		if u, key, ok = unwrap(obj); !ok {
			return
		}
		unknown = dynamicinformer.FinalStateUnknown(obj)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.objs != nil {
		delete(f.objs, key)
	}
	n := Notification{Kind: Delete, Key: key, Obj: u, Unknown: unknown}
	for _, m := range f.subs {
		m.intake.Push(m.sub.Item(n))
	}
}
