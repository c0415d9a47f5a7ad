package scripting

import (
	"strconv"

	"github.com/dop251/goja"
)

// exportValue converts a JS value into Go data for reading (logging, diffing) within the
// limits of one value (limits.go), throwing a RangeError beyond them: views yield the data
// behind them (shared, so never mutate the result), plain objects and arrays are copied,
// functions and parts nested deeper than maxDepth become nil, dates export as time.Time,
// errors as their "Name: message", other objects as their enumerable properties.
func (e *callEnv) exportValue(what string, v goja.Value) any {
	return e.budget(what).export(v, 0)
}

func (b *budget) export(v goja.Value, depth int) any {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		if isString(v) {
			b.addString(v)
		}
		return v.Export()
	}
	if data, ok := viewData(obj); ok {
		return data // already Go data: nothing is copied
	}
	if depth >= maxDepth || isFunction(obj) {
		return nil
	}
	switch obj.ClassName() {
	case "Array":
		return b.exportArray(obj, depth)
	case "Date":
		return obj.Export()
	case "Error":
		msg := b.env.describe(obj)
		b.addChars(len(msg))
		return msg
	}
	keys := obj.Keys()
	b.addItems(int64(len(keys)), "an object with properties")
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		b.addChars(len(k))
		out[k] = b.export(obj.Get(k), depth+1)
	}
	return out
}

func (b *budget) exportArray(obj *goja.Object, depth int) []any {
	n := obj.Get("length").ToInteger()
	b.addItems(n, "an array of length")
	out := make([]any, n)
	for i := range out {
		out[i] = b.export(obj.Get(strconv.Itoa(i)), depth+1)
	}
	return out
}
