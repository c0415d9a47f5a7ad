package scripting

import (
	"fmt"
	"slices"

	"github.com/dop251/goja"
)

// Argument readers for bindings. They throw a TypeError naming the function and parameter, so
// a script mistake reads like one rather than like a Go type assertion.

// stringArg returns argument i as a string; undefined and null read as "".
func (e *callEnv) stringArg(fn string, call goja.FunctionCall, i int, param string) string {
	v := call.Argument(i)
	if isMissing(v) {
		return ""
	}
	if !isString(v) {
		panic(e.rt.NewTypeError(fmt.Sprintf("%s: %s must be a string, got %s", fn, param, typeName(v))))
	}
	e.budget(fn).addString(v) // before the string is copied out of the runtime
	return v.String()
}

// options reads an options object whose fields are all named in keys; unknown fields throw,
// with a suggestion, because a misspelt selector would otherwise silently match everything.
// Field values are returned as exported by goja.
func (e *callEnv) options(fn string, v goja.Value, keys ...string) map[string]goja.Value {
	out := make(map[string]goja.Value, len(keys))
	if isMissing(v) {
		return out
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		panic(e.rt.NewTypeError(fmt.Sprintf("%s: options must be an object, got %s", fn, typeName(v))))
	}
	for _, k := range obj.Keys() {
		if !slices.Contains(keys, k) {
			msg := fmt.Sprintf("%s: unknown option '%s'", fn, k)
			if c := closest(k, keys); c != "" {
				msg += fmt.Sprintf("; did you mean '%s'?", c)
			}
			panic(e.rt.NewTypeError(msg))
		}
		if x := obj.Get(k); !isMissing(x) {
			out[k] = x
		}
	}
	return out
}

// stringOptions is options where every field must be a string.
func (e *callEnv) stringOptions(fn string, v goja.Value, keys ...string) map[string]string {
	out := make(map[string]string, len(keys))
	b := e.budget(fn)
	for k, x := range e.options(fn, v, keys...) {
		if !isString(x) {
			panic(e.rt.NewTypeError(fmt.Sprintf("%s: option %s must be a string, got %s", fn, k, typeName(x))))
		}
		b.addString(x)
		out[k] = x.String()
	}
	return out
}

// joinKey renders namespace/name the way client-go keys objects.
func joinKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
