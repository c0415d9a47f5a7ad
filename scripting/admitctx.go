package scripting

import (
	"slices"

	"github.com/dop251/goja"
)

// admitCtx is the ctx argument of validate and mutate: the request's operation, oldObject,
// userInfo, dryRun, subResource, resource, namespace and name, the script's name and its
// read-only cache and indexes. One per runtime, made on first use, reading the current call's
// request; valid only during that call and read-only like ctx. Used only on the executor
// goroutine (env.go).
type admitCtx struct {
	env   *callEnv
	req   AdmissionRequest
	ev    Event // what ctx.cache reads: the request's Cache and Resource
	obj   *goja.Object
	cache goja.Value
	name  goja.Value
	store goja.Value // ctx.store, the handlers' (writes throw here: store.go)
}

var admitCtxKeys = []string{"operation", "oldObject", "userInfo", "dryRun", "subResource", "resource", "namespace", "name", "script", "cache", "store"}

// admitCtx is the instance's admission ctx, made on first use.
func (s *instance) admitCtx() *admitCtx {
	if s.admission == nil {
		c := &admitCtx{env: s.callEnv, name: s.rt.ToValue(s.name), store: s.ctx.store}
		c.cache = newCache(s.callEnv, &c.ev).exports()
		c.obj = s.rt.NewDynamicObject(c)
		s.admission = c
	}
	return s.admission
}

// clear forgets the request, whose objects are the caller's.
func (c *admitCtx) clear() { c.req, c.ev = AdmissionRequest{}, Event{} }

func (c *admitCtx) Get(key string) goja.Value {
	r, rt := &c.req, c.env.rt
	switch key {
	case "operation":
		return rt.ToValue(r.Operation)
	case "oldObject":
		return c.objectOrNull(r.OldObject)
	case "userInfo":
		return c.objectOrNull(r.UserInfo)
	case "dryRun":
		return rt.ToValue(r.DryRun)
	case "subResource":
		return rt.ToValue(r.SubResource)
	case "resource":
		return rt.ToValue(r.Resource)
	case "namespace":
		return rt.ToValue(r.Namespace)
	case "name":
		return rt.ToValue(r.Name)
	case "script":
		return c.name
	case "cache":
		return c.cache
	case "store":
		return c.store
	}
	return nil
}

func (c *admitCtx) objectOrNull(obj Object) goja.Value {
	if obj == nil {
		return goja.Null()
	}
	return c.env.view(obj)
}

func (c *admitCtx) Has(key string) bool         { return slices.Contains(admitCtxKeys, key) }
func (c *admitCtx) Keys() []string              { return admitCtxKeys }
func (c *admitCtx) Set(string, goja.Value) bool { panic(c.env.rt.NewTypeError("ctx is read-only")) }
func (c *admitCtx) Delete(string) bool          { panic(c.env.rt.NewTypeError("ctx is read-only")) }
