package scripting

import (
	"slices"
	"strconv"

	"github.com/dop251/goja"
)

// The util global: clone gives scripts a mutable copy of a read-only view; diff compares two
// states of an object; base64Encode/base64Decode (base64.go) read and write Secret data.

func (s *instance) newUtil() (*goja.Object, error) {
	util := s.rt.NewObject()
	if err := util.Set("clone", s.utilClone); err != nil {
		return nil, err
	}
	if err := util.Set("diff", s.utilDiff); err != nil {
		return nil, err
	}
	if err := util.Set("base64Encode", s.utilBase64Encode); err != nil {
		return nil, err
	}
	if err := util.Set("base64Decode", s.utilBase64Decode); err != nil {
		return nil, err
	}
	if err := util.Set("ownerReference", s.utilOwnerReference); err != nil {
		return nil, err
	}
	if err := util.Set("setStatusCondition", s.utilSetStatusCondition); err != nil {
		return nil, err
	}
	return util, nil
}

// utilClone is util.clone(value): a deep, mutable, plain-JS copy. Views, plain objects and
// arrays are copied; functions and other objects (Date, Map, ...) are shared.
func (s *instance) utilClone(call goja.FunctionCall) goja.Value {
	defer s.guard("util.clone")
	return s.budget("util.clone").clone(call.Argument(0), 0)
}

// clone copies v within the limits of one value. Strings are immutable and shared, so only
// elements and properties are charged.
func (b *budget) clone(v goja.Value, depth int) goja.Value {
	s := b.s
	obj, ok := v.(*goja.Object)
	if !ok {
		return v
	}
	if data, ok := viewData(obj); ok {
		return s.plain(data)
	}
	if depth >= maxDepth {
		s.throwf("util.clone: %w", errTooDeep)
	}
	switch {
	case isFunction(obj):
		return v
	case obj.ClassName() == "Array":
		n := obj.Get("length").ToInteger()
		b.addItems(n, "an array of length")
		items := make([]any, n)
		for i := range items {
			items[i] = b.clone(obj.Get(strconv.Itoa(i)), depth+1)
		}
		return s.rt.NewArray(items...)
	case obj.ClassName() == "Object":
		out := s.rt.NewObject()
		keys := obj.Keys()
		b.addItems(int64(len(keys)), "an object with properties")
		for _, k := range keys {
			_ = out.Set(k, b.clone(obj.Get(k), depth+1))
		}
		return out
	}
	return v
}

// plain builds ordinary, mutable JS values from unstructured Go data.
func (s *instance) plain(x any) goja.Value {
	switch x := x.(type) {
	case map[string]any:
		out := s.rt.NewObject()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			_ = out.Set(k, s.plain(x[k]))
		}
		return out
	case []any:
		items := make([]any, len(x))
		for i, el := range x {
			items[i] = s.plain(el)
		}
		return s.rt.NewArray(items...)
	}
	v, composite := s.toJS(x)
	if composite { // a hand-built Go value; toJS normalized it into a view
		return s.plain(s.exportValue("util.clone", v))
	}
	return v
}

// utilDiff is util.diff(a, b): [{path, old, new}] for every leaf that differs, ignoring
// metadata.resourceVersion, metadata.managedFields and metadata.generation. Arrays are
// compared by index; a missing side is undefined.
func (s *instance) utilDiff(call goja.FunctionCall) goja.Value {
	defer s.guard("util.diff")
	b := s.budget("util.diff")
	changes := diff(b.export(call.Argument(0), 0), b.export(call.Argument(1), 0))
	items := make([]any, len(changes))
	for i, c := range changes {
		entry := s.rt.NewObject()
		_ = entry.Set("path", c.path)
		_ = entry.Set("old", s.diffSide(c.old, c.hasOld))
		_ = entry.Set("new", s.diffSide(c.new, c.hasNew))
		items[i] = entry
	}
	return s.rt.NewArray(items...)
}

func (s *instance) diffSide(x any, present bool) goja.Value {
	if !present {
		return goja.Undefined()
	}
	v, _ := s.toJS(x)
	return v
}
