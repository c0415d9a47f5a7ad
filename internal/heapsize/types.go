package heapsize

import "reflect"

// typeInfo is what the walk needs to know of a type, computed once per walk.
type typeInfo struct {
	// enter: the walk may go into values of this type (Config.Follow).
	enter bool
	// walk: values of this type may hold something to follow, so containers of it are iterated.
	walk bool
	// fields lists, for an entered struct, the fields that may hold something to follow.
	fields []int
}

func (w *walker) info(t reflect.Type) *typeInfo {
	if ti, ok := w.types[t]; ok {
		return ti
	}
	ti := &typeInfo{}
	w.types[t] = ti // before the fields: a recursive type sees itself as holding nothing yet
	ti.enter = w.follows(t)
	if !ti.enter {
		return ti
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map, reflect.String:
		ti.walk = true
	case reflect.Array:
		ti.walk = t.Len() > 0 && w.info(t.Elem()).walk
	case reflect.Struct:
		ti.fields = w.structFields(t)
		ti.walk = len(ti.fields) > 0
	default:
	}
	return ti
}

// structFields lists the fields of t worth reading. A field of a recursive type met while its
// own info is being computed may be left out; pointers always hold something, so only struct
// values nested in themselves (impossible in Go) could be.
func (w *walker) structFields(t reflect.Type) []int {
	var fields []int
	for i := range t.NumField() {
		f := t.Field(i)
		if w.cfg.Skip != nil && w.cfg.Skip(t, f) {
			continue
		}
		if holdsPointers(f.Type) {
			fields = append(fields, i)
		}
	}
	return fields
}

func (w *walker) follows(t reflect.Type) bool {
	if t.Name() == "" || t.PkgPath() == "" || w.cfg.Follow == nil {
		return true
	}
	return w.cfg.Follow(t)
}

// holdsPointers reports whether a value of t can reference other memory.
func holdsPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map, reflect.String:
		return true
	case reflect.Array:
		return t.Len() > 0 && holdsPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsPointers(t.Field(i).Type) {
				return true
			}
		}
	default:
	}
	return false
}
