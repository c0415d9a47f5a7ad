package scripting

import (
	"fmt"

	"github.com/dop251/goja"
)

// Read-only objects report what they are: frozen, sealed, not extensible, every property
// non-writable and non-configurable; freezing, sealing or preventing extensions of one is a
// no-op that succeeds, as on any frozen object. goja's dynamic objects, which views are,
// claim to be extensible with writable properties, and refuse preventExtensions with a
// message of their own; these wrappers of Object's and Reflect's introspection answer for
// them and leave every other object to the built-in. Go functions, not JavaScript: they are
// installed in every runtime, and cost less to create (BenchmarkInstantiate).

// onReadOnly answers a wrapped built-in for a read-only first argument; orig is the built-in.
type onReadOnly func(gb *guardedBuiltins, call goja.FunctionCall, orig goja.Callable) goja.Value

func answer(v bool) onReadOnly {
	return func(gb *guardedBuiltins, _ goja.FunctionCall, _ goja.Callable) goja.Value { return gb.rt.ToValue(v) }
}

func itself(_ *guardedBuiltins, call goja.FunctionCall, _ goja.Callable) goja.Value {
	return call.Argument(0)
}

// descriptor is the built-in's descriptor, made non-writable and non-configurable.
func descriptor(gb *guardedBuiltins, call goja.FunctionCall, orig goja.Callable) goja.Value {
	return gb.asFrozen(callBuiltin(orig, call))
}

// descriptors is getOwnPropertyDescriptors of a read-only object: every own key's
// descriptor, made so (goja's leaves out a dynamic array's length), from the built-in
// Reflect.ownKeys and Object.getOwnPropertyDescriptor.
func descriptors(gb *guardedBuiltins, call goja.FunctionCall, _ goja.Callable) goja.Value {
	view := call.Argument(0)
	keys := callBuiltin(gb.ownKeys, goja.FunctionCall{This: goja.Undefined(), Arguments: []goja.Value{view}}).ToObject(gb.rt)
	out := gb.rt.NewObject()
	n := int(keys.Get("length").ToInteger())
	for i := range n {
		k := keys.Get(fmt.Sprint(i))
		d := callBuiltin(gb.gopd, goja.FunctionCall{This: goja.Undefined(), Arguments: []goja.Value{view, k}})
		_ = out.Set(k.String(), gb.asFrozen(d))
	}
	return out
}

var frozenReports = []struct {
	owner, name string
	fn          onReadOnly
}{
	{"Object", "isFrozen", answer(true)},
	{"Object", "isSealed", answer(true)},
	{"Object", "isExtensible", answer(false)},
	{"Object", "freeze", itself},
	{"Object", "seal", itself},
	{"Object", "preventExtensions", itself},
	{"Object", "getOwnPropertyDescriptor", descriptor},
	{"Object", "getOwnPropertyDescriptors", descriptors},
	{"Reflect", "isExtensible", answer(false)},
	{"Reflect", "preventExtensions", answer(true)},
	{"Reflect", "getOwnPropertyDescriptor", descriptor},
}

// reportFrozen wraps the built-ins of frozenReports.
func (gb *guardedBuiltins) reportFrozen() error {
	reflect := gb.rt.Get("Reflect").ToObject(gb.rt)
	gb.ownKeys, _ = goja.AssertFunction(reflect.Get("ownKeys"))
	gb.gopd, _ = goja.AssertFunction(gb.rt.Get("Object").ToObject(gb.rt).Get("getOwnPropertyDescriptor"))
	if gb.ownKeys == nil || gb.gopd == nil {
		return fmt.Errorf("guard Object.getOwnPropertyDescriptors: no built-in Reflect.ownKeys or Object.getOwnPropertyDescriptor")
	}
	for _, r := range frozenReports {
		owner := gb.rt.Get(r.owner).ToObject(gb.rt)
		origVal := owner.Get(r.name)
		orig, ok := goja.AssertFunction(origVal)
		if !ok {
			return fmt.Errorf("guard %s.%s: not a function", r.owner, r.name)
		}
		wrapper := func(call goja.FunctionCall) goja.Value {
			if isReadOnly(call.Argument(0)) {
				return r.fn(gb, call, orig)
			}
			return callBuiltin(orig, call)
		}
		length := int(origVal.ToObject(gb.rt).Get("length").ToInteger())
		if err := gb.defineFunc(owner, r.name, wrapper, length); err != nil {
			return fmt.Errorf("guard %s.%s: %w", r.owner, r.name, err)
		}
	}
	return nil
}

// callBuiltin calls a built-in with the wrapper's arguments; its exception (or an interrupt)
// unwinds as it is.
func callBuiltin(orig goja.Callable, call goja.FunctionCall) goja.Value {
	v, err := orig(call.This, call.Arguments...)
	if err != nil {
		panic(err)
	}
	return v
}

// asFrozen makes a property descriptor non-configurable and, for a data property,
// non-writable; undefined (no such property) stays undefined.
func (gb *guardedBuiltins) asFrozen(d goja.Value) goja.Value {
	if d == nil || goja.IsUndefined(d) || goja.IsNull(d) {
		return d
	}
	obj := d.ToObject(gb.rt)
	_ = obj.Set("configurable", false)
	if obj.Get("value") != nil {
		_ = obj.Set("writable", false)
	}
	return d
}
