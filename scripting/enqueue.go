package scripting

import (
	"fmt"
	"strconv"

	"github.com/dop251/goja"
)

// Owner mapping: what a watch entry's events enqueue for reconcile.

// EnqueueMode says what the events of one watch entry enqueue for reconcile.
type EnqueueMode int

const (
	// EnqueueSelf enqueues the object's own key (the default).
	EnqueueSelf EnqueueMode = iota
	// EnqueueOwner enqueues the key of the object's controller owner (ownerReferences with
	// controller: true), as controller-runtime's Owns does; an object without one enqueues
	// nothing.
	EnqueueOwner
	// EnqueueNone enqueues nothing: the entry only feeds ctx.cache.
	EnqueueNone
	// EnqueueFunc enqueues what the entry's function returns for the object.
	EnqueueFunc
)

// readEnqueue reads each watch entry's `enqueue` and keeps the functions.
func (s *instance) readEnqueue(watch goja.Value, l locator) error {
	entries := watchEntries(watch)
	for i, entry := range entries {
		if i >= len(s.def.Watch) {
			break
		}
		if entry == nil {
			continue // a resource string: its own key
		}
		v := entry.Get("enqueue")
		if isMissing(v) {
			continue
		}
		where := "watch.enqueue"
		if len(entries) > 1 || isArray(watch) {
			where = fmt.Sprintf("watch[%d].enqueue", i)
		}
		mode, fn, err := readEnqueueValue(v, where, l)
		if err != nil {
			return err
		}
		if mode != EnqueueSelf && !s.def.Reconcile {
			return invalidf(l.file, l.line("enqueue"), fmt.Sprintf("'%s' only means something with a 'reconcile' handler", where))
		}
		s.def.Watch[i].Enqueue = mode
		if fn != nil {
			if s.enqueueFns == nil {
				s.enqueueFns = map[int]goja.Callable{}
			}
			s.enqueueFns[i] = fn
		}
	}
	return nil
}

func readEnqueueValue(v goja.Value, where string, l locator) (EnqueueMode, goja.Callable, error) {
	if fn, ok := goja.AssertFunction(v); ok {
		return EnqueueFunc, fn, nil
	}
	switch x := v.Export().(type) {
	case string:
		switch x {
		case "owner":
			return EnqueueOwner, nil, nil
		case "self":
			return EnqueueSelf, nil, nil
		}
	case bool:
		if x {
			return EnqueueSelf, nil, nil
		}
		return EnqueueNone, nil, nil
	}
	return 0, nil, invalidf(l.file, l.line("enqueue"), fmt.Sprintf(
		"'%s' must be \"owner\", false, or a function (obj) => key | key[]; got %s", where, v.String()))
}

// watchEntries are the objects of a watch value (one, or each of a list); strings give nil.
func watchEntries(v goja.Value) []*goja.Object {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return []*goja.Object{nil}
	}
	if obj.ClassName() != "Array" {
		return []*goja.Object{obj}
	}
	n := int(min(obj.Get("length").ToInteger(), maxWatches))
	out := make([]*goja.Object, n)
	for i := range n {
		out[i], _ = obj.Get(strconv.Itoa(i)).(*goja.Object)
	}
	return out
}

func isArray(v goja.Value) bool {
	obj, ok := v.(*goja.Object)
	return ok && obj.ClassName() == "Array"
}

// EnqueueKeys calls watch[i].enqueue(obj) and returns the keys it names: a key, a list of
// keys, or null for none.
func (s *Script) EnqueueKeys(i int, obj Object) ([]string, error) {
	label := fmt.Sprintf("watch[%d].enqueue", i)
	if i < 0 || i >= len(s.def.Watch) || s.def.Watch[i].Enqueue != EnqueueFunc {
		return nil, s.noop(label)
	}
	var keys []string
	err := s.run(label, func(in *instance) (err error) {
		keys, err = in.mapKeys(label, in.enqueueFns[i], obj)
		return err
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}

func (s *instance) mapKeys(label string, fn goja.Callable, obj Object) (keys []string, err error) {
	if err := s.beginPure(label, "enqueue functions"); err != nil {
		return nil, err
	}
	defer s.end(&err)
	v, err := s.call(goja.Undefined(), fn, s.view(obj))
	if err != nil {
		return nil, err
	}
	return s.indexValues(v)
}
