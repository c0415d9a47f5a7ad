package scripting

import (
	"strconv"

	"github.com/dop251/goja"
)

// maxDepth bounds recursion over script values, which may be cyclic.
const maxDepth = 100

// exportValue converts a JS value into Go data for reading (logging, diffing): views yield
// the data behind them (shared, so never mutate the result), plain objects and arrays are
// copied, functions become nil, other objects export as goja does.
func exportValue(v goja.Value) any {
	return exportDepth(v, 0)
}

func exportDepth(v goja.Value, depth int) any {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return v.Export()
	}
	if data, ok := viewData(obj); ok {
		return data
	}
	if depth >= maxDepth || isFunction(obj) {
		return nil
	}
	switch obj.ClassName() {
	case "Array":
		n := int(obj.Get("length").ToInteger())
		out := make([]any, n)
		for i := range n {
			out[i] = exportDepth(obj.Get(strconv.Itoa(i)), depth+1)
		}
		return out
	case "Object":
		keys := obj.Keys()
		out := make(map[string]any, len(keys))
		for _, k := range keys {
			out[k] = exportDepth(obj.Get(k), depth+1)
		}
		return out
	}
	return obj.Export()
}
