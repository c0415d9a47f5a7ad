package scripting

import (
	"fmt"
	"math"

	"github.com/dop251/goja"
)

// The deadline interrupts JavaScript between instructions, but a Go built-in runs to its end:
// `a.length = 2**32 - 1; a.lastIndexOf(1)` walks four billion empty slots, and
// `JSON.stringify(a)` or `a.join()` also allocates for each. guardedBuiltins wraps the built-ins
// that walk a length (Array.prototype methods, Array.from, apply) or size a result from a
// number (String.prototype.repeat and padding), and the array iterators that spreading, Set and
// Array.from drain in Go, in Go functions that throw a RangeError past
// maxLength elements or maxChars characters, before calling the original; typed arrays and
// ArrayBuffer get subclasses that check their size (guardProgram). JSON.stringify is replaced
// by the bounded one of stringify.go. What is left (a built-in on an array within the limits,
// a catastrophic regular expression) is bounded by the executor: the call is abandoned Grace
// after its deadline.

// guardedBuiltins installs the guards on its runtime's built-ins, once, before the module
// runs (installGlobals); the wrappers then run on the executor goroutine like any binding.
type guardedBuiltins struct {
	*callEnv
	// The built-ins reportFrozen's getOwnPropertyDescriptors uses, before they are wrapped.
	ownKeys, gopd goja.Callable
}

// guard is one wrapped built-in: where it lives, its name, and the check run before it.
type guard struct {
	owner, name string
	check       func(gb *guardedBuiltins, call goja.FunctionCall)
}

// walksReceiver checks the length of `this`, which the built-in walks.
func walksReceiver(what string) func(*guardedBuiltins, goja.FunctionCall) {
	return func(gb *guardedBuiltins, call goja.FunctionCall) {
		gb.checkLength(what, lengthOf(call.This), maxLength)
	}
}

// walksArgument checks the length of argument i.
func walksArgument(what string, i int) func(*guardedBuiltins, goja.FunctionCall) {
	return func(gb *guardedBuiltins, call goja.FunctionCall) {
		gb.checkLength(what, lengthOf(call.Argument(i)), maxLength)
	}
}

var arrayWalkers = []string{
	"copyWithin", "every", "fill", "filter", "find", "findIndex", "findLast", "findLastIndex",
	"flat", "flatMap", "forEach", "includes", "indexOf", "lastIndexOf", "map", "reduce",
	"reduceRight", "reverse", "shift", "slice", "some", "sort", "splice", "toLocaleString",
	"toReversed", "toSorted", "toSpliced", "toString", "unshift", "with",
	// Iterators: spreading, new Set(a), Array.from(a) and Math.max(...a) drain them in Go.
	"values", "keys", "entries",
}

func guards() []guard {
	gs := make([]guard, 0, len(arrayWalkers)+10)
	for _, name := range arrayWalkers {
		gs = append(gs, guard{"Array.prototype", name, walksReceiver("Array.prototype." + name)})
	}
	return append(gs,
		guard{"Array.prototype", "concat", checkConcat},
		guard{"Array.prototype", "join", checkJoin},
		guard{"Array", "from", walksArgument("Array.from", 0)},
		guard{"Function.prototype", "apply", walksArgument("Function.prototype.apply", 1)},
		guard{"Reflect", "apply", walksArgument("Reflect.apply", 2)},
		guard{"Reflect", "construct", walksArgument("Reflect.construct", 1)},
		guard{"String.prototype", "repeat", checkRepeat},
		guard{"String.prototype", "padStart", checkPad("String.prototype.padStart")},
		guard{"String.prototype", "padEnd", checkPad("String.prototype.padEnd")},
		guard{"Object", "setPrototypeOf", checkProto},
		guard{"Reflect", "setPrototypeOf", checkProto},
	)
}

func checkConcat(gb *guardedBuiltins, call goja.FunctionCall) {
	n := lengthOf(call.This)
	for _, a := range call.Arguments {
		n += lengthOf(a)
	}
	gb.checkLength("Array.prototype.concat", n, maxLength)
}

func checkJoin(gb *guardedBuiltins, call goja.FunctionCall) {
	n := lengthOf(call.This)
	gb.checkLength("Array.prototype.join", n, maxLength)
	if sep := call.Argument(0); isString(sep) {
		gb.checkLength("Array.prototype.join", n*float64(jsLength(sep)), maxChars)
	}
}

func checkRepeat(gb *guardedBuiltins, call goja.FunctionCall) {
	if isString(call.This) {
		gb.checkLength("String.prototype.repeat", float64(jsLength(call.This))*call.Argument(0).ToFloat(), maxChars)
	}
}

func checkPad(what string) func(*guardedBuiltins, goja.FunctionCall) {
	return func(gb *guardedBuiltins, call goja.FunctionCall) {
		gb.checkLength(what, call.Argument(0).ToFloat(), maxChars)
	}
}

// checkProto refuses to replace the prototype of a view or ctx: they are read-only.
func checkProto(gb *guardedBuiltins, call goja.FunctionCall) {
	if isReadOnly(call.Argument(0)) {
		panic(gb.readOnly())
	}
}

// lengthOf is an object's length property as a number (0 for primitives and non-numbers).
func lengthOf(v goja.Value) float64 {
	obj, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	n := obj.Get("length")
	if n == nil {
		return 0
	}
	if f := n.ToFloat(); !math.IsNaN(f) {
		return f
	}
	return 0
}

func (gb *guardedBuiltins) checkLength(what string, n, limit float64) {
	if n > limit {
		gb.throwRange("%s: length %.0f is too large (the limit is %.0f)", what, n, limit)
	}
}

// guardProgram subclasses the typed arrays and ArrayBuffer to check their size, and guards the
// __proto__ setter of read-only objects. (A subclass, not a Proxy: goja's instanceof does not
// accept a Proxy.)
var guardProgram = goja.MustCompile(internalName, `(function (maxLength, isReadOnly, readOnly) {
  "use strict";
  const defineProperty = Object.defineProperty, Num = Number, RangeErr = RangeError;
  const sized = (what, x) => {
    const n = (x !== null && typeof x === "object") ? Num(x.length) : Num(x);
    if (n > maxLength) throw new RangeErr(what + ": length " + n + " is too large (the limit is " + maxLength + ")");
  };
  for (const name of ["ArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array",
      "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array"]) {
    const guarded = class extends globalThis[name] {
      constructor(...args) { sized(name, args[0]); super(...args); }
    };
    defineProperty(guarded, "name", { value: name });
    defineProperty(globalThis, name, { value: guarded, writable: true, enumerable: false, configurable: true });
  }
  const proto = Object.getOwnPropertyDescriptor(Object.prototype, "__proto__");
  const getProto = proto.get, setProto = proto.set, call = Function.prototype.call.bind(Function.prototype.call);
  defineProperty(Object.prototype, "__proto__", { get: getProto, enumerable: false, configurable: true,
    set: function __proto__(v) { if (isReadOnly(this)) throw readOnly(); return call(setProto, this, v); } });
})`, true)

// install wraps the built-ins and replaces JSON.stringify.
func (gb *guardedBuiltins) install() error {
	for _, g := range guards() {
		if err := gb.wrapBuiltin(g); err != nil {
			return fmt.Errorf("guard %s.%s: %w", g.owner, g.name, err)
		}
	}
	v, err := gb.rt.RunProgram(guardProgram)
	if err != nil {
		return fmt.Errorf("guard built-ins: %w", err)
	}
	install, _ := goja.AssertFunction(v)
	isRO := func(call goja.FunctionCall) goja.Value { return gb.rt.ToValue(isReadOnly(call.Argument(0))) }
	readOnly := func(goja.FunctionCall) goja.Value { return gb.readOnly() }
	if _, err := install(goja.Undefined(), gb.rt.ToValue(maxLength), gb.rt.ToValue(isRO), gb.rt.ToValue(readOnly)); err != nil {
		return fmt.Errorf("guard built-ins: %w", err)
	}
	// Array.prototype[Symbol.iterator] is values: make it the guarded one too.
	proto := gb.rt.Get("Array").ToObject(gb.rt).Get("prototype").ToObject(gb.rt)
	if err := proto.DefineDataPropertySymbol(goja.SymIterator, proto.Get("values"),
		goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return fmt.Errorf("guard Array.prototype[Symbol.iterator]: %w", err)
	}
	if err := gb.reportFrozen(); err != nil {
		return err
	}
	json := gb.rt.Get("JSON").ToObject(gb.rt)
	return gb.defineFunc(json, "stringify", gb.stringifyBinding, 3)
}

// wrapBuiltin replaces owner.name with a Go function that runs the check, then the original.
// The wrapper takes the built-in's name and length, so stacks and introspection read as before.
func (gb *guardedBuiltins) wrapBuiltin(g guard) error {
	owner, err := gb.rt.RunString(g.owner)
	if err != nil {
		return err
	}
	obj := owner.ToObject(gb.rt)
	origVal := obj.Get(g.name)
	orig, ok := goja.AssertFunction(origVal)
	if !ok {
		return fmt.Errorf("%s.%s is not a function", g.owner, g.name)
	}
	wrapper := func(call goja.FunctionCall) goja.Value {
		g.check(gb, call)
		v, err := orig(call.This, call.Arguments...)
		if err != nil {
			panic(err) // an exception or interrupt from the built-in: let it unwind as it is
		}
		return v
	}
	length := int(origVal.ToObject(gb.rt).Get("length").ToInteger())
	return gb.defineFunc(obj, g.name, wrapper, length)
}

// defineFunc defines obj.name as fn, a non-enumerable method named name of the given length.
func (gb *guardedBuiltins) defineFunc(obj *goja.Object, name string, fn func(goja.FunctionCall) goja.Value, length int) error {
	f := gb.rt.ToValue(fn).ToObject(gb.rt)
	if err := f.DefineDataProperty("name", gb.rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	if err := f.DefineDataProperty("length", gb.rt.ToValue(length), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return obj.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// stringifyBinding is the script's JSON.stringify(value, replacer, space), bounded.
func (gb *guardedBuiltins) stringifyBinding(call goja.FunctionCall) goja.Value {
	defer gb.guard("JSON.stringify")
	return gb.stringify("JSON.stringify", call.Argument(0), call.Argument(1), call.Argument(2))
}
