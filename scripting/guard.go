package scripting

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// The deadline interrupts JavaScript between instructions, but a Go built-in runs to its end:
// `a.length = 2**32 - 1; a.lastIndexOf(1)` walks four billion empty slots, and
// `JSON.stringify(a)` or `a.join()` also allocates for each. guardProgram wraps the built-ins
// that walk a length (Array.prototype methods, Array.from, apply) or size a result from a
// number (String.prototype.repeat and padding, typed arrays and ArrayBuffer, as subclasses) so that a length past maxLength,
// or a string past maxChars characters, throws a RangeError before the built-in starts.
// JSON.stringify is replaced by the bounded one of stringify.go. What is left (a built-in on
// an array within the limits, a catastrophic regular expression) is bounded by the executor:
// the call is abandoned Grace after its deadline.
var guardProgram = goja.MustCompile(internalName, `(function (maxLength, maxChars, isReadOnly, readOnlyMessage) {
  "use strict";
  const reflectApply = Reflect.apply, reflectConstruct = Reflect.construct, defineProperty = Object.defineProperty;
  const named = `+wrapperFactories()+`;
  const RangeErr = RangeError, TypeErr = TypeError, Num = Number;
  const check = (what, n, limit) => {
    if (n > limit) throw new RangeErr(what + ": length " + n + " is too large (the limit is " + limit + ")");
  };
  const lengthOf = (x) => (x !== null && (typeof x === "object" || typeof x === "function")) ? Num(x.length) : 0;
  const wrap = (obj, name, pre) => {
    const orig = obj[name];
    const wrapped = named[name](orig, pre);
    defineProperty(wrapped, "length", { value: orig.length });
    defineProperty(obj, name, { value: wrapped, writable: true, enumerable: false, configurable: true });
  };
  const receiver = (what) => (self) => check(what, lengthOf(self), maxLength);
  for (const name of ["copyWithin", "every", "fill", "filter", "find", "findIndex", "findLast",
      "findLastIndex", "flat", "flatMap", "forEach", "includes", "indexOf", "lastIndexOf", "map",
      "reduce", "reduceRight", "reverse", "shift", "slice", "some", "sort", "splice",
      "toLocaleString", "toReversed", "toSorted", "toSpliced", "toString", "unshift", "with"]) {
    wrap(Array.prototype, name, receiver("Array.prototype." + name));
  }
  wrap(Array.prototype, "concat", (self, args) => {
    let n = lengthOf(self);
    for (const a of args) n += lengthOf(a);
    check("Array.prototype.concat", n, maxLength);
  });
  wrap(Array.prototype, "join", (self, args) => {
    const n = lengthOf(self);
    check("Array.prototype.join", n, maxLength);
    if (typeof args[0] === "string") check("Array.prototype.join", n * args[0].length, maxChars);
  });
  wrap(Array, "from", (self, args) => check("Array.from", lengthOf(args[0]), maxLength));
  wrap(Function.prototype, "apply", (self, args) => check("Function.prototype.apply", lengthOf(args[1]), maxLength));
  wrap(Reflect, "apply", (self, args) => check("Reflect.apply", lengthOf(args[2]), maxLength));
  wrap(Reflect, "construct", (self, args) => check("Reflect.construct", lengthOf(args[1]), maxLength));
  wrap(String.prototype, "repeat", (self, args) => {
    if (typeof self === "string") check("String.prototype.repeat", self.length * Num(args[0]), maxChars);
  });
  for (const name of ["padStart", "padEnd"]) {
    wrap(String.prototype, name, (self, args) => check("String.prototype." + name, Num(args[0]), maxChars));
  }
  // Views and ctx are read-only; goja lets any object's prototype be replaced, so say no here.
  const noProto = (self, args) => { if (isReadOnly(args[0])) throw new TypeErr(readOnlyMessage); };
  wrap(Object, "setPrototypeOf", noProto);
  wrap(Reflect, "setPrototypeOf", noProto);
  const proto = Object.getOwnPropertyDescriptor(Object.prototype, "__proto__");
  const setProto = proto.set;
  defineProperty(Object.prototype, "__proto__", { get: proto.get, enumerable: false, configurable: true,
    set: function __proto__(v) { noProto(undefined, [this]); return reflectApply(setProto, this, [v]); } });
  const sized = (what, x) => check(what, typeof x === "object" ? lengthOf(x) : Num(x), maxLength);
  for (const name of ["ArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array",
      "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array"]) {
    // A subclass rather than a Proxy: goja's instanceof does not accept a Proxy.
    const guarded = class extends globalThis[name] {
      constructor(...args) { sized(name, args[0]); super(...args); }
    };
    defineProperty(guarded, "name", { value: name });
    defineProperty(globalThis, name, { value: guarded, writable: true, enumerable: false, configurable: true });
  }
})`, true)

// guardedNames are the built-ins guardProgram wraps, by function name.
var guardedNames = []string{
	"copyWithin", "every", "fill", "filter", "find", "findIndex", "findLast", "findLastIndex",
	"flat", "flatMap", "forEach", "includes", "indexOf", "lastIndexOf", "map", "reduce",
	"reduceRight", "reverse", "shift", "slice", "some", "sort", "splice", "toLocaleString",
	"toReversed", "toSorted", "toSpliced", "toString", "unshift", "with", "concat", "join",
	"from", "apply", "construct", "repeat", "padStart", "padEnd", "setPrototypeOf",
}

// wrapperFactories is a JS object with one factory per guarded name, making a wrapper whose
// function name is the built-in's, so that stacks name the built-in the script called.
func wrapperFactories() string {
	var b strings.Builder
	b.WriteString("{\n")
	for _, name := range guardedNames {
		fn := name
		if fn == "with" { // a reserved word
			fn = "with_"
		}
		fmt.Fprintf(&b, "    %s: (orig, pre) => function %s(...args) { pre(this, args); return reflectApply(orig, this, args); },\n", name, fn)
	}
	b.WriteString("  }")
	return b.String()
}

// installGuards wraps the built-ins and replaces JSON.stringify; it runs before the module.
func (s *instance) installGuards() error {
	v, err := s.rt.RunProgram(guardProgram)
	if err != nil {
		return fmt.Errorf("guard built-ins: %w", err)
	}
	install, _ := goja.AssertFunction(v)
	isReadOnly := func(call goja.FunctionCall) goja.Value {
		obj, ok := call.Argument(0).(*goja.Object)
		return s.rt.ToValue(ok && readOnlyTypes[obj.ExportType()])
	}
	if _, err := install(goja.Undefined(), s.rt.ToValue(maxLength), s.rt.ToValue(maxChars),
		s.rt.ToValue(isReadOnly), s.rt.ToValue(readOnlyMessage)); err != nil {
		return fmt.Errorf("guard built-ins: %w", err)
	}
	json := s.rt.Get("JSON").ToObject(s.rt)
	return json.DefineDataProperty("stringify", s.rt.ToValue(s.jsonStringify),
		goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}
