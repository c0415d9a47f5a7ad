package scripting

import (
	"slices"

	"github.com/dop251/goja"
)

// ctxObject is the handlers' ctx argument. One object per runtime reads the current call's
// Event, so passing ctx costs nothing per call; it is valid only during the call it was
// passed to, and read-only like the objects. The instance sets ev when a handler call starts
// and clears it when the call ends (handlers.go, instance.go); ctx.cache (cache.go) reads the
// same ev. Used only on the executor goroutine (env.go).
type ctxObject struct {
	env    *callEnv
	ev     Event
	script goja.Value
	cache  goja.Value
	enq    goja.Value
	// store is ctx.store (store.go), the same for every call.
	store goja.Value
	// outbox is ctx.outbox (outbox.go), the same for every call.
	outbox goja.Value
	// metrics is ctx.metrics, set once the definition is read (metrics.go).
	metrics goja.Value
	// The last resource string and its JS value: consecutive events are usually the same.
	resource    string
	resourceVal goja.Value
}

var ctxKeys = []string{"resource", "script", "isInInitialList", "finalStateUnknown", "cache", "enqueue", "metrics", "store", "outbox", "delivery"}

// newCtx makes the ctx of the script named script.
func newCtx(env *callEnv, script string) *ctxObject {
	c := &ctxObject{env: env, script: env.rt.ToValue(script), resourceVal: env.rt.ToValue("")}
	c.cache = newCache(env, &c.ev).exports()
	c.enq = env.rt.ToValue(c.enqueue)
	return c
}

func (c *ctxObject) Get(key string) goja.Value {
	ev := &c.ev
	switch key {
	case "resource":
		if ev.Resource != c.resource {
			c.resource, c.resourceVal = ev.Resource, c.env.rt.ToValue(ev.Resource)
		}
		return c.resourceVal
	case "script":
		return c.script
	case "isInInitialList":
		return c.env.rt.ToValue(ev.IsInInitialList)
	case "finalStateUnknown":
		return c.env.rt.ToValue(ev.FinalStateUnknown)
	case "cache":
		return c.cache
	case "enqueue":
		return c.enq
	case "metrics":
		return c.metrics
	case "store":
		return c.store
	case "outbox":
		return c.outbox
	case "delivery":
		return c.deliveryValue()
	}
	return nil
}

func (c *ctxObject) Has(key string) bool {
	return slices.Contains(ctxKeys, key)
}

func (c *ctxObject) Keys() []string              { return ctxKeys }
func (c *ctxObject) Set(string, goja.Value) bool { panic(c.env.rt.NewTypeError("ctx is read-only")) }
func (c *ctxObject) Delete(string) bool          { panic(c.env.rt.NewTypeError("ctx is read-only")) }

// enqueue is ctx.enqueue(key): adds key to the script's reconcile queue.
func (c *ctxObject) enqueue(call goja.FunctionCall) goja.Value {
	e := c.env
	defer e.guard("ctx.enqueue")
	if v := call.Argument(0); isString(v) && jsLength(v) > maxKeyLength {
		e.throwRange("ctx.enqueue: key of %d characters is too long (the limit is %d)", jsLength(v), maxKeyLength)
	}
	key := e.stringArg("ctx.enqueue", call, 0, "key")
	if key == "" {
		e.throwf("ctx.enqueue needs a key such as \"namespace/name\"")
	}
	if c.ev.Enqueue == nil {
		e.throwf("ctx.enqueue is not available here")
	}
	c.ev.Enqueue(key)
	return goja.Undefined()
}
