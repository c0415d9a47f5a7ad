package scripting

import (
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strconv"
)

var errTooDeep = errors.New("value nested too deeply (is it cyclic?)")

// change is one differing leaf found by diff.
type change struct {
	path           string
	old, new       any
	hasOld, hasNew bool
}

// diffIgnored are paths every update changes; reporting them would drown real changes.
var diffIgnored = map[string]bool{
	"metadata.resourceVersion": true,
	"metadata.managedFields":   true,
	"metadata.generation":      true,
}

func diff(a, b any) []change {
	var out []change
	diffInto(&out, "", a, b, true, true)
	return out
}

func diffInto(out *[]change, path string, a, b any, hasA, hasB bool) {
	if diffIgnored[path] {
		return
	}
	if hasA && hasB {
		if am, ok := a.(map[string]any); ok {
			if bm, ok := b.(map[string]any); ok {
				diffMaps(out, path, am, bm)
				return
			}
		}
		if as, ok := a.([]any); ok {
			if bs, ok := b.([]any); ok {
				diffSlices(out, path, as, bs)
				return
			}
		}
		if scalarEqual(a, b) {
			return
		}
	}
	*out = append(*out, change{path: path, old: a, new: b, hasOld: hasA, hasNew: hasB})
}

func diffMaps(out *[]change, path string, a, b map[string]any) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		av, hasA := a[k]
		bv, hasB := b[k]
		diffInto(out, joinPath(path, k), av, bv, hasA, hasB)
	}
}

func diffSlices(out *[]change, path string, a, b []any) {
	for i := range max(len(a), len(b)) {
		var av, bv any
		if i < len(a) {
			av = a[i]
		}
		if i < len(b) {
			bv = b[i]
		}
		diffInto(out, path+"["+strconv.Itoa(i)+"]", av, bv, i < len(a), i < len(b))
	}
}

// scalarEqual compares leaves; numbers compare by value whatever their Go type.
func scalarEqual(a, b any) bool {
	if af, ok := toFloat(a); ok {
		bf, ok := toFloat(b)
		return ok && af == bf
	}
	return reflect.DeepEqual(a, b)
}

func toFloat(x any) (float64, bool) {
	switch x := x.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// joinPath appends key the way JS would access it: a.b, or a["app.kubernetes.io/name"].
func joinPath(path, key string) string {
	if !identifier.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
