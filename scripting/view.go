package scripting

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/dop251/goja"
)

// Objects reach JS only through these read-only views, never through Runtime.ToValue(map),
// which would be a live, writable window into the informer's cache. Children are wrapped on
// first access and remembered, so obj.spec === obj.spec and a second access is one lookup.

const readOnlyMessage = "object is read-only; use util.clone(obj) for a mutable copy"

type objectView struct {
	env *callEnv
	m   map[string]any
	// first is the first wrapped child handed out, kept in the view itself: most objects on
	// a handler's path (obj.spec.template.spec...) have exactly one child accessed, and a
	// reload wraps tens of thousands of them. more holds any others.
	first kid
	more  *kidSet
}

// kid is a remembered child view; val is nil in an empty slot.
type kid struct {
	key string
	val *goja.Object
}

// kidSet is a view's children past the first: a short slice, no hashing, until a script walks
// a large map and maxLinearKids is passed, then a map.
type kidSet struct {
	kids  []kid
	byKey map[string]*goja.Object
}

const maxLinearKids = 16

type arrayView struct {
	env  *callEnv
	a    []any
	kids []*goja.Object // wrapped elements handed out, by index; nil until the first
}

// toJS converts a value of an unstructured object. Maps and slices become views; the second
// result says so, telling the caller the value is worth remembering.
func (e *callEnv) toJS(x any) (goja.Value, bool) {
	switch x := x.(type) {
	case nil:
		return goja.Null(), false
	case string:
		return e.rt.ToValue(x), false
	case bool, int64, float64, int, int32, float32, uint32:
		return e.rt.ToValue(x), false
	case map[string]any:
		return e.rt.NewDynamicObject(&objectView{env: e, m: x}), true
	case []any:
		return e.rt.NewDynamicArray(&arrayView{env: e, a: x}), true
	case json.Number:
		return e.rt.ToValue(numberValue(x)), false
	default:
		// Not what unstructured holds, but Go callers may build such objects by hand.
		return e.toJS(e.normalize(x))
	}
}

// normalize runs arbitrary MarshalJSON methods, so a panic there must become a JS exception.
func (e *callEnv) normalize(x any) any {
	defer e.guard("converting a Go value for the script")
	return normalize(x)
}

// view returns the read-only view of obj, or null for a nil object (a tombstone without Obj).
func (e *callEnv) view(obj Object) goja.Value {
	if obj == nil {
		return goja.Null()
	}
	return e.rt.NewDynamicObject(&objectView{env: e, m: obj})
}

// viewList returns a read-only array of object views.
func (e *callEnv) viewList(objs []Object) goja.Value {
	a := make([]any, len(objs))
	for i, o := range objs {
		a[i] = o
	}
	return e.rt.NewDynamicArray(&arrayView{env: e, a: a})
}

func (v *objectView) Get(key string) goja.Value {
	if val := v.kid(key); val != nil {
		return val
	}
	x, ok := v.m[key]
	if !ok {
		return nil
	}
	val, composite := v.env.toJS(x)
	if composite {
		v.remember(key, val.(*goja.Object))
	}
	return val
}

// kid returns the remembered child view of key, or nil (an untyped nil: no view).
func (v *objectView) kid(key string) goja.Value {
	if v.first.val != nil && v.first.key == key {
		return v.first.val
	}
	if v.more != nil {
		if o := v.more.get(key); o != nil {
			return o
		}
	}
	return nil
}

func (v *objectView) remember(key string, val *goja.Object) {
	switch {
	case v.first.val == nil:
		v.first = kid{key, val}
	case v.more == nil:
		v.more = &kidSet{kids: []kid{{key, val}}}
	default:
		v.more.add(key, val)
	}
}

func (k *kidSet) get(key string) *goja.Object {
	if k.byKey != nil {
		return k.byKey[key]
	}
	for i := range k.kids {
		if k.kids[i].key == key {
			return k.kids[i].val
		}
	}
	return nil
}

func (k *kidSet) add(key string, val *goja.Object) {
	switch {
	case k.byKey != nil:
		k.byKey[key] = val
	case len(k.kids) < maxLinearKids:
		k.kids = append(k.kids, kid{key, val})
	default:
		k.byKey = make(map[string]*goja.Object, 2*maxLinearKids)
		for _, c := range k.kids {
			k.byKey[c.key] = c.val
		}
		k.byKey[key] = val
		k.kids = nil
	}
}

func (v *objectView) Set(string, goja.Value) bool { panic(v.env.readOnly()) }
func (v *objectView) Delete(string) bool          { panic(v.env.readOnly()) }

func (v *objectView) Has(key string) bool {
	_, ok := v.m[key]
	return ok
}

// Keys are sorted: Go maps have no order, and JSON.stringify output must be stable.
func (v *objectView) Keys() []string {
	keys := make([]string, 0, len(v.m))
	for k := range v.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (v *objectView) MarshalJSON() ([]byte, error) { return json.Marshal(v.m) }

func (v *arrayView) Len() int { return len(v.a) }

func (v *arrayView) Get(idx int) goja.Value {
	if idx < 0 || idx >= len(v.a) {
		return nil
	}
	if v.kids != nil && v.kids[idx] != nil {
		return v.kids[idx]
	}
	val, composite := v.env.toJS(v.a[idx])
	if composite {
		if v.kids == nil {
			v.kids = make([]*goja.Object, len(v.a))
		}
		v.kids[idx] = val.(*goja.Object)
	}
	return val
}

func (v *arrayView) Set(int, goja.Value) bool { panic(v.env.readOnly()) }
func (v *arrayView) SetLen(int) bool          { panic(v.env.readOnly()) }

func (v *arrayView) MarshalJSON() ([]byte, error) { return json.Marshal(v.a) }

var (
	objectViewType = reflect.TypeFor[*objectView]()
	arrayViewType  = reflect.TypeFor[*arrayView]()
	// readOnlyTypes are the export types of the read-only objects scripts are given: views,
	// ctx and ctx.cache. Their prototype cannot be replaced either (guard.go).
	readOnlyTypes = map[reflect.Type]bool{
		objectViewType: true, arrayViewType: true,
		reflect.TypeFor[*ctxObject](): true, reflect.TypeFor[*frozen](): true,
	}
)

// isReadOnly reports whether v is one of the read-only objects scripts are given.
func isReadOnly(v goja.Value) bool {
	obj, ok := v.(*goja.Object)
	return ok && readOnlyTypes[obj.ExportType()]
}

// viewData returns the Go data behind a view, or false when obj is not one of ours. It checks
// the export type first because exporting an ordinary object copies it deeply.
func viewData(obj *goja.Object) (any, bool) {
	switch obj.ExportType() {
	case objectViewType:
		return obj.Export().(*objectView).m, true
	case arrayViewType:
		return obj.Export().(*arrayView).a, true
	}
	return nil, false
}
