package scripting

import (
	"github.com/dop251/goja"
)

// cacheObject is ctx.cache: reads of the informer caches through the current call's
// Event.Cache, which ev points at (the ctxObject's). Used only on the executor goroutine
// (env.go).
type cacheObject struct {
	*callEnv
	ev *Event
}

func newCache(env *callEnv, ev *Event) *cacheObject { return &cacheObject{callEnv: env, ev: ev} }

var cacheKeys = []string{"get", "list", "byIndex", "indexKeys"}

// exports is the ctx.cache object, read-only like ctx.
func (c *cacheObject) exports() *goja.Object {
	return c.rt.NewDynamicObject(&frozen{rt: c.rt, keys: cacheKeys, vals: map[string]goja.Value{
		"get":       c.rt.ToValue(c.get),
		"list":      c.rt.ToValue(c.list),
		"byIndex":   c.rt.ToValue(c.byIndex),
		"indexKeys": c.rt.ToValue(c.indexKeys),
	}})
}

func (c *cacheObject) cacheOrThrow() Cache {
	if c.ev.Cache == nil {
		c.throwf("ctx.cache is not available here")
	}
	return c.ev.Cache
}

// get is ctx.cache.get(namespace, name, resource?): the object or null.
func (c *cacheObject) get(call goja.FunctionCall) goja.Value {
	defer c.guard("ctx.cache.get")
	const fn = "ctx.cache.get"
	ns, name := c.stringArg(fn, call, 0, "namespace"), c.stringArg(fn, call, 1, "name")
	obj, err := c.cacheOrThrow().Get(c.stringArg(fn, call, 2, "resource"), ns, name)
	if err != nil {
		c.throwf("ctx.cache.get %s: %w", joinKey(ns, name), err)
	}
	return c.view(obj)
}

// list is ctx.cache.list({namespace, labelSelector, resource}).
func (c *cacheObject) list(call goja.FunctionCall) goja.Value {
	defer c.guard("ctx.cache.list")
	opts := c.stringOptions("ctx.cache.list", call.Argument(0), "namespace", "labelSelector", "resource")
	objs, err := c.cacheOrThrow().List(opts["resource"], opts["namespace"], opts["labelSelector"])
	if err != nil {
		c.throwf("ctx.cache.list: %w", err)
	}
	return c.viewList(objs)
}

// byIndex is ctx.cache.byIndex(index, value): the objects indexed under value.
func (c *cacheObject) byIndex(call goja.FunctionCall) goja.Value {
	defer c.guard("ctx.cache.byIndex")
	const fn = "ctx.cache.byIndex"
	index, value := c.stringArg(fn, call, 0, "index"), c.stringArg(fn, call, 1, "value")
	objs, err := c.cacheOrThrow().ByIndex(index, value)
	if err != nil {
		c.throwf("ctx.cache.byIndex %s=%s: %w", index, value, err)
	}
	return c.viewList(objs)
}

// indexKeys is ctx.cache.indexKeys(index, value): the keys indexed under value.
func (c *cacheObject) indexKeys(call goja.FunctionCall) goja.Value {
	defer c.guard("ctx.cache.indexKeys")
	const fn = "ctx.cache.indexKeys"
	index, value := c.stringArg(fn, call, 0, "index"), c.stringArg(fn, call, 1, "value")
	keys, err := c.cacheOrThrow().IndexKeys(index, value)
	if err != nil {
		c.throwf("ctx.cache.indexKeys %s=%s: %w", index, value, err)
	}
	items := make([]any, len(keys))
	for i, k := range keys {
		items[i] = k
	}
	return c.rt.NewArray(items...)
}

// frozen is a fixed, read-only namespace object such as ctx.cache.
type frozen struct {
	rt   *goja.Runtime
	keys []string
	vals map[string]goja.Value
}

func (f *frozen) Get(key string) goja.Value { return f.vals[key] }
func (f *frozen) Has(key string) bool {
	_, ok := f.vals[key]
	return ok
}
func (f *frozen) Keys() []string              { return f.keys }
func (f *frozen) Set(string, goja.Value) bool { panic(f.rt.NewTypeError("object is read-only")) }
func (f *frozen) Delete(string) bool          { panic(f.rt.NewTypeError("object is read-only")) }
