package scripting

import (
	"github.com/dop251/goja"
)

// stringify is JSON.stringify within the limits of one value. A replacer of ours sees every
// value the built-in is about to write, after toJSON and before the built-in walks an array,
// and throws a RangeError once the value's budget is spent; a script's replacer function runs
// first. A replacer list (an allowlist of keys) cannot be combined with a function, so the
// value is first measured whole, then serialized with the list: the limits apply to the value
// before the list narrows it. Exceptions and interrupts propagate as panics, as in a binding.
func (e *callEnv) stringify(what string, v, replacer, space goja.Value) goja.Value {
	b := e.budget(what)
	var user goja.Callable
	if obj, ok := replacer.(*goja.Object); ok {
		if fn, ok := goja.AssertFunction(obj); ok {
			user = fn
		} else if e.isArray(obj) {
			b.addItems(obj.Get("length").ToInteger(), "a replacer list of length")
			e.rawStringify(v, e.rt.ToValue(b.replacer(nil)), goja.Undefined())
			return e.rawStringify(v, replacer, space)
		}
	}
	return e.rawStringify(v, e.rt.ToValue(b.replacer(user)), space)
}

func (e *callEnv) rawStringify(v, replacer, space goja.Value) goja.Value {
	out, err := e.internals.stringify(goja.Undefined(), v, replacer, space)
	if err != nil {
		panic(err) // a goja exception or interrupt: let it unwind as it is
	}
	return out
}

// replacer counts each value JSON.stringify is about to write, after user's replacer.
func (b *budget) replacer(user goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		key, v := call.Argument(0), call.Argument(1)
		if user != nil {
			var err error
			if v, err = user(call.This, key, v); err != nil {
				panic(err)
			}
		}
		b.addItems(1, "values")
		b.addString(key)
		b.charge(v)
		return v
	}
}

// charge counts a value JSON.stringify will write: a string's characters, an array's length
// (before the built-in walks it), an object's properties.
func (b *budget) charge(v goja.Value) {
	if isString(v) {
		b.addString(v)
		return
	}
	obj, ok := v.(*goja.Object)
	if !ok || isFunction(obj) {
		return
	}
	if b.env.isArray(obj) {
		b.room(obj.Get("length").ToInteger(), "an array of length") // elements count as visited
	}
}

func (e *callEnv) isArray(obj *goja.Object) bool {
	if obj.ClassName() == "Array" {
		return true
	}
	v, err := e.internals.isArray(goja.Undefined(), obj)
	return err == nil && v.ToBoolean()
}
