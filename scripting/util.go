package scripting

import (
	"slices"
	"strconv"
	"time"

	"github.com/dop251/goja"
)

// The util global: clone gives scripts a mutable copy of a read-only view; diff compares two
// states of an object; base64Encode/base64Decode (base64.go) read and write Secret data.

// utilModule is the util global. Used only on the executor goroutine (env.go).
type utilModule struct {
	*callEnv
	now func() time.Time // the script's clock (Options.Now): virtual under runner test
}

func newUtil(env *callEnv, now func() time.Time) *utilModule {
	if now == nil {
		now = time.Now
	}
	return &utilModule{callEnv: env, now: now}
}

// exports is the util object.
func (u *utilModule) exports() (*goja.Object, error) {
	obj := u.rt.NewObject()
	for _, f := range []struct {
		name string
		fn   func(goja.FunctionCall) goja.Value
	}{
		{"clone", u.clone}, {"diff", u.diff},
		{"base64Encode", u.base64Encode}, {"base64Decode", u.base64Decode},
		{"ownerReference", u.ownerReference}, {"setStatusCondition", u.setStatusCondition},
		{"retryAfter", u.retryAfter},
	} {
		if err := obj.Set(f.name, f.fn); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// clone is util.clone(value): a deep, mutable, plain-JS copy. Views, plain objects and
// arrays are copied; functions and other objects (Date, Map, ...) are shared.
func (u *utilModule) clone(call goja.FunctionCall) goja.Value {
	defer u.guard("util.clone")
	return u.cloneValue(u.budget("util.clone"), call.Argument(0), 0)
}

// cloneValue copies v within the limits of one value, b. Strings are immutable and shared, so
// only elements and properties are charged.
func (u *utilModule) cloneValue(b *budget, v goja.Value, depth int) goja.Value {
	obj, ok := v.(*goja.Object)
	if !ok {
		return v
	}
	if data, ok := viewData(obj); ok {
		return u.plain(data)
	}
	if depth >= maxDepth {
		u.throwf("util.clone: %w", errTooDeep)
	}
	switch {
	case isFunction(obj):
		return v
	case obj.ClassName() == "Array":
		n := obj.Get("length").ToInteger()
		b.addItems(n, "an array of length")
		items := make([]any, n)
		for i := range items {
			items[i] = u.cloneValue(b, obj.Get(strconv.Itoa(i)), depth+1)
		}
		return u.rt.NewArray(items...)
	case obj.ClassName() == "Object":
		out := u.rt.NewObject()
		keys := obj.Keys()
		b.addItems(int64(len(keys)), "an object with properties")
		for _, k := range keys {
			_ = out.Set(k, u.cloneValue(b, obj.Get(k), depth+1))
		}
		return out
	}
	return v
}

// plain builds ordinary, mutable JS values from unstructured Go data.
func (u *utilModule) plain(x any) goja.Value {
	switch x := x.(type) {
	case map[string]any:
		out := u.rt.NewObject()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			_ = out.Set(k, u.plain(x[k]))
		}
		return out
	case []any:
		items := make([]any, len(x))
		for i, el := range x {
			items[i] = u.plain(el)
		}
		return u.rt.NewArray(items...)
	}
	v, composite := u.toJS(x)
	if composite { // a hand-built Go value; toJS normalized it into a view
		return u.plain(u.exportValue("util.clone", v))
	}
	return v
}

// diff is util.diff(a, b): [{path, old, new}] for every leaf that differs, ignoring
// metadata.resourceVersion, metadata.managedFields and metadata.generation. Arrays are
// compared by index; a missing side is undefined.
func (u *utilModule) diff(call goja.FunctionCall) goja.Value {
	defer u.guard("util.diff")
	b := u.budget("util.diff")
	changes := diff(b.export(call.Argument(0), 0), b.export(call.Argument(1), 0))
	items := make([]any, len(changes))
	for i, c := range changes {
		entry := u.rt.NewObject()
		_ = entry.Set("path", c.path)
		_ = entry.Set("old", u.diffSide(c.old, c.hasOld))
		_ = entry.Set("new", u.diffSide(c.new, c.hasNew))
		items[i] = entry
	}
	return u.rt.NewArray(items...)
}

func (u *utilModule) diffSide(x any, present bool) goja.Value {
	if !present {
		return goja.Undefined()
	}
	v, _ := u.toJS(x)
	return v
}
