package admission

import (
	"encoding/json"
	"math"
)

// What a mutation changed. A script sees the request's object through JavaScript, and the
// object it returns comes back through JavaScript too: a number is a float64 there, so an
// integer above 2^53 comes back rounded, and a "__proto__" key of a plain object sets the
// prototype instead of a property, so a clone loses it. Diffing the request's object against
// the returned one would put such fields in the patch, rewriting what the script never
// touched. keepUntouched takes them back from the request's object first.

// protoKey is the one object key a JavaScript copy (util.clone, a spread, Object.assign)
// drops: assigning it sets the copy's prototype.
const protoKey = "__proto__"

// keepUntouched is out, the object a mutation returned, with every value the script could
// not tell from orig's (jsEqual) replaced by orig's own, and the "__proto__" keys of orig's
// objects that out lacks put back. The result equals out as JavaScript sees it: what the
// script changed stays changed, and only that differs from orig. orig is not modified; the
// result shares orig's values where it keeps them, and out's elsewhere.
func keepUntouched(orig, out any) any {
	if jsEqual(orig, out) {
		return orig
	}
	switch o := orig.(type) {
	case map[string]any:
		if n, ok := out.(map[string]any); ok {
			return keepInObject(o, n)
		}
	case []any:
		if n, ok := out.([]any); ok {
			return keepInArray(o, n)
		}
	}
	return out
}

func keepInObject(orig, out map[string]any) map[string]any {
	res := make(map[string]any, len(out)+1)
	for k, v := range out {
		if ov, ok := orig[k]; ok {
			v = keepUntouched(ov, v)
		}
		res[k] = v
	}
	if v, ok := orig[protoKey]; ok {
		if _, kept := out[protoKey]; !kept {
			res[protoKey] = v
		}
	}
	return res
}

// keepInArray matches elements by index, and when the lengths differ also by their distance
// from the end, so that an element added or removed at either end leaves the others as
// they were.
func keepInArray(orig, out []any) []any {
	res := make([]any, len(out))
	shift := len(orig) - len(out)
	for i, v := range out {
		j := i + shift
		switch {
		case shift != 0 && j >= 0 && j < len(orig) && jsEqual(orig[j], v):
			res[i] = orig[j]
		case i < len(orig):
			res[i] = keepUntouched(orig[i], v)
		default:
			res[i] = v
		}
	}
	return res
}

// jsEqual reports whether a and b, decoded JSON values, are the same to a script: numbers
// equal as float64, objects equal but for a "__proto__" key only a has.
func jsEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && objectsEqual(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return a == b // strings, booleans, null: comparable
}

func objectsEqual(x, y map[string]any) bool {
	n := len(y)
	if _, ok := x[protoKey]; ok {
		if _, ok := y[protoKey]; !ok {
			n++
		}
	}
	if len(x) != n {
		return false
	}
	for k, v := range x {
		w, ok := y[k]
		if !ok {
			if k == protoKey {
				continue
			}
			return false
		}
		if !jsEqual(v, w) {
			return false
		}
	}
	return true
}

// number is v as the float64 JavaScript holds it, false when v is not a number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	}
	return 0, false
}
