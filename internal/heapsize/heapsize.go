package heapsize

import (
	"reflect"
	"time"
	"unsafe"
)

// DefaultMaxObjects is Config.MaxObjects when it is zero: the walk's own memory (its set of
// visited addresses) stays near 50 MB.
const DefaultMaxObjects = 1 << 20

// trackStrings is the length from which a string's bytes are counted once per address: shorter
// ones are counted wherever they are reached, which keeps the visited set small.
const trackStrings = 64

// Config says where the walk goes and when it stops.
type Config struct {
	// Follow reports whether the walk enters values of the named type t. Predeclared and
	// unnamed types (pointers, slices, maps, arrays, struct literals) are always entered; their
	// element types are asked on their own. Nil follows every type.
	Follow func(t reflect.Type) bool
	// Skip reports whether field f of struct type t must not be read. Nil skips none.
	Skip func(t reflect.Type, f reflect.StructField) bool
	// MaxObjects bounds the allocations tracked; DefaultMaxObjects when zero.
	MaxObjects int
	// Deadline, when not zero, stops the walk once passed.
	Deadline time.Time
}

// Result is what Measure found.
type Result struct {
	// Bytes reachable from the root (see the package comment for what counts).
	Bytes int64
	// Objects is the number of allocations tracked.
	Objects int
	// Truncated reports that the walk stopped at MaxObjects or the Deadline: Bytes is a lower
	// bound.
	Truncated bool
}

// Measure walks the graph reachable from root, which is usually a pointer; the root's own
// allocation is counted when root is a pointer the Config follows.
func Measure(root any, cfg Config) Result {
	if cfg.MaxObjects <= 0 {
		cfg.MaxObjects = DefaultMaxObjects
	}
	w := &walker{cfg: cfg, seen: map[uintptr]struct{}{}, types: map[reflect.Type]*typeInfo{}}
	w.run(reflect.ValueOf(root))
	return w.res
}

// walker holds one walk's state. The graph is walked depth first with an explicit stack of
// containers being iterated, so a long linked structure costs heap, not goroutine stack.
type walker struct {
	cfg   Config
	seen  map[uintptr]struct{}
	types map[reflect.Type]*typeInfo
	stack []frame
	steps int
	res   Result
}

func (w *walker) run(root reflect.Value) {
	if root.IsValid() {
		w.visit(root)
	}
	for len(w.stack) > 0 && !w.stopped() {
		child, ok := w.stack[len(w.stack)-1].next()
		if !ok {
			w.stack[len(w.stack)-1] = frame{}
			w.stack = w.stack[:len(w.stack)-1]
			continue
		}
		w.visit(child)
	}
}

// stopped checks the deadline every few thousand steps.
func (w *walker) stopped() bool {
	w.steps++
	if w.steps%4096 == 0 && !w.cfg.Deadline.IsZero() && time.Now().After(w.cfg.Deadline) {
		w.res.Truncated = true
	}
	return w.res.Truncated
}

// visit counts what v allocates beyond its own inline bytes (which its container counted) and
// schedules its children.
func (w *walker) visit(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		w.pointer(v)
	case reflect.Interface:
		w.iface(v)
	case reflect.Struct:
		if fields := w.info(v.Type()).fields; len(fields) > 0 {
			w.stack = append(w.stack, frame{v: v, fields: fields})
		}
	case reflect.Array:
		if w.info(v.Type().Elem()).walk {
			w.stack = append(w.stack, frame{v: v, n: v.Len()})
		}
	case reflect.Slice:
		w.slice(v)
	case reflect.Map:
		w.mapping(v)
	case reflect.String:
		w.str(v)
	default: // scalars hold nothing; functions, channels and unsafe pointers are opaque
	}
}

func (w *walker) pointer(v reflect.Value) {
	if v.IsNil() {
		return
	}
	et := v.Type().Elem()
	if !w.info(et).enter || !w.track(v.Pointer()) {
		return
	}
	w.res.Bytes += int64(et.Size())
	w.visit(v.Elem())
}

// iface counts a boxed value (anything but a pointer-shaped one) each time it is reached.
func (w *walker) iface(v reflect.Value) {
	if v.IsNil() {
		return
	}
	e := v.Elem()
	if !w.info(e.Type()).enter {
		return
	}
	switch e.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
	default:
		w.res.Bytes += int64(e.Type().Size())
	}
	w.visit(e)
}

func (w *walker) slice(v reflect.Value) {
	if v.IsNil() || v.Cap() == 0 || !w.track(v.Pointer()) {
		return
	}
	et := v.Type().Elem()
	w.res.Bytes += int64(v.Cap()) * int64(et.Size())
	if w.info(et).walk {
		w.stack = append(w.stack, frame{v: v, n: v.Len()})
	}
}

func (w *walker) mapping(v reflect.Value) {
	if v.IsNil() || !w.track(v.Pointer()) {
		return
	}
	t := v.Type()
	w.res.Bytes += 48 + 2*int64(v.Len())*int64(t.Key().Size()+t.Elem().Size())
	if w.info(t.Key()).walk || w.info(t.Elem()).walk {
		w.stack = append(w.stack, frame{v: v, iter: v.MapRange()})
	}
}

func (w *walker) str(v reflect.Value) {
	s := v.String()
	if len(s) >= trackStrings && !w.track(uintptr(unsafe.Pointer(unsafe.StringData(s)))) {
		return
	}
	w.res.Bytes += int64(len(s))
}

// track records an allocation's address; false when it was seen already or the budget is spent.
func (w *walker) track(p uintptr) bool {
	if _, ok := w.seen[p]; ok {
		return false
	}
	if len(w.seen) >= w.cfg.MaxObjects {
		w.res.Truncated = true
		return false
	}
	w.seen[p] = struct{}{}
	w.res.Objects++
	return true
}
