package scripting

import (
	"slices"

	"github.com/dop251/goja"
)

// ctxObject is the handlers' ctx argument. One object per Script reads the current call's
// Event, so passing ctx costs nothing per call; it is valid only during the call it was
// passed to, and read-only like the objects.
type ctxObject struct {
	s      *instance
	script goja.Value
	cache  goja.Value
	enq    goja.Value
	// The last resource string and its JS value: consecutive events are usually the same.
	resource    string
	resourceVal goja.Value
}

var ctxKeys = []string{"resource", "script", "isInInitialList", "finalStateUnknown", "cache", "enqueue"}

func (s *instance) newCtx() *goja.Object {
	c := &ctxObject{s: s, script: s.rt.ToValue(s.name), resourceVal: s.rt.ToValue("")}
	c.cache = s.rt.NewDynamicObject(&frozen{s: s, keys: []string{"get", "list", "byIndex", "indexKeys"}, vals: map[string]goja.Value{
		"get":       s.rt.ToValue(s.cacheGet),
		"list":      s.rt.ToValue(s.cacheList),
		"byIndex":   s.rt.ToValue(s.cacheByIndex),
		"indexKeys": s.rt.ToValue(s.cacheIndexKeys),
	}})
	c.enq = s.rt.ToValue(s.enqueue)
	return s.rt.NewDynamicObject(c)
}

func (c *ctxObject) Get(key string) goja.Value {
	ev := &c.s.ev
	switch key {
	case "resource":
		if ev.Resource != c.resource {
			c.resource, c.resourceVal = ev.Resource, c.s.rt.ToValue(ev.Resource)
		}
		return c.resourceVal
	case "script":
		return c.script
	case "isInInitialList":
		return c.s.rt.ToValue(ev.IsInInitialList)
	case "finalStateUnknown":
		return c.s.rt.ToValue(ev.FinalStateUnknown)
	case "cache":
		return c.cache
	case "enqueue":
		return c.enq
	}
	return nil
}

func (c *ctxObject) Has(key string) bool {
	return slices.Contains(ctxKeys, key)
}

func (c *ctxObject) Keys() []string              { return ctxKeys }
func (c *ctxObject) Set(string, goja.Value) bool { panic(c.s.rt.NewTypeError("ctx is read-only")) }
func (c *ctxObject) Delete(string) bool          { panic(c.s.rt.NewTypeError("ctx is read-only")) }

// frozen is a fixed, read-only namespace object such as ctx.cache.
type frozen struct {
	s    *instance
	keys []string
	vals map[string]goja.Value
}

func (f *frozen) Get(key string) goja.Value { return f.vals[key] }
func (f *frozen) Has(key string) bool {
	_, ok := f.vals[key]
	return ok
}
func (f *frozen) Keys() []string              { return f.keys }
func (f *frozen) Set(string, goja.Value) bool { panic(f.s.rt.NewTypeError("object is read-only")) }
func (f *frozen) Delete(string) bool          { panic(f.s.rt.NewTypeError("object is read-only")) }

func (s *instance) cacheOrThrow() Cache {
	if s.ev.Cache == nil {
		s.throwf("ctx.cache is not available here")
	}
	return s.ev.Cache
}

// cacheGet is ctx.cache.get(namespace, name, resource?): the object or null.
func (s *instance) cacheGet(call goja.FunctionCall) goja.Value {
	defer s.guard("ctx.cache.get")
	const fn = "ctx.cache.get"
	ns, name := s.stringArg(fn, call, 0, "namespace"), s.stringArg(fn, call, 1, "name")
	obj, err := s.cacheOrThrow().Get(s.stringArg(fn, call, 2, "resource"), ns, name)
	if err != nil {
		s.throwf("ctx.cache.get %s: %w", joinKey(ns, name), err)
	}
	return s.view(obj)
}

// cacheList is ctx.cache.list({namespace, labelSelector, resource}).
func (s *instance) cacheList(call goja.FunctionCall) goja.Value {
	defer s.guard("ctx.cache.list")
	opts := s.stringOptions("ctx.cache.list", call.Argument(0), "namespace", "labelSelector", "resource")
	objs, err := s.cacheOrThrow().List(opts["resource"], opts["namespace"], opts["labelSelector"])
	if err != nil {
		s.throwf("ctx.cache.list: %w", err)
	}
	return s.viewList(objs)
}

// cacheByIndex is ctx.cache.byIndex(index, value): the objects indexed under value.
func (s *instance) cacheByIndex(call goja.FunctionCall) goja.Value {
	defer s.guard("ctx.cache.byIndex")
	const fn = "ctx.cache.byIndex"
	index, value := s.stringArg(fn, call, 0, "index"), s.stringArg(fn, call, 1, "value")
	objs, err := s.cacheOrThrow().ByIndex(index, value)
	if err != nil {
		s.throwf("ctx.cache.byIndex %s=%s: %w", index, value, err)
	}
	return s.viewList(objs)
}

// cacheIndexKeys is ctx.cache.indexKeys(index, value): the keys indexed under value.
func (s *instance) cacheIndexKeys(call goja.FunctionCall) goja.Value {
	defer s.guard("ctx.cache.indexKeys")
	const fn = "ctx.cache.indexKeys"
	index, value := s.stringArg(fn, call, 0, "index"), s.stringArg(fn, call, 1, "value")
	keys, err := s.cacheOrThrow().IndexKeys(index, value)
	if err != nil {
		s.throwf("ctx.cache.indexKeys %s=%s: %w", index, value, err)
	}
	items := make([]any, len(keys))
	for i, k := range keys {
		items[i] = k
	}
	return s.rt.NewArray(items...)
}

// enqueue is ctx.enqueue(key): adds key to the script's reconcile queue.
func (s *instance) enqueue(call goja.FunctionCall) goja.Value {
	defer s.guard("ctx.enqueue")
	if v := call.Argument(0); isString(v) && jsLength(v) > maxKeyLength {
		s.throwRange("ctx.enqueue: key of %d characters is too long (the limit is %d)", jsLength(v), maxKeyLength)
	}
	key := s.stringArg("ctx.enqueue", call, 0, "key")
	if key == "" {
		s.throwf("ctx.enqueue needs a key such as \"namespace/name\"")
	}
	if s.ev.Enqueue == nil {
		s.throwf("ctx.enqueue is not available here")
	}
	s.ev.Enqueue(key)
	return goja.Undefined()
}
