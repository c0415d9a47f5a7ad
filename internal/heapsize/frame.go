package heapsize

import "reflect"

// frame is a container whose children are being walked: a struct (its fields), an array or a
// slice (its elements up to n), or a map (its keys and values, one at a time).
type frame struct {
	v      reflect.Value
	fields []int
	i, n   int
	iter   *reflect.MapIter
	value  reflect.Value // a map entry's value, yielded after its key
	hasVal bool
}

// next yields the next child, or false when the container is done.
func (f *frame) next() (reflect.Value, bool) {
	switch {
	case f.iter != nil:
		return f.nextEntry()
	case f.fields != nil:
		if f.i >= len(f.fields) {
			return reflect.Value{}, false
		}
		f.i++
		return f.v.Field(f.fields[f.i-1]), true
	default:
		if f.i >= f.n {
			return reflect.Value{}, false
		}
		f.i++
		return f.v.Index(f.i - 1), true
	}
}

func (f *frame) nextEntry() (reflect.Value, bool) {
	if f.hasVal {
		f.hasVal = false
		return f.value, true
	}
	if !f.iter.Next() {
		return reflect.Value{}, false
	}
	f.value, f.hasVal = f.iter.Value(), true
	return f.iter.Key(), true
}
