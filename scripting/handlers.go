package scripting

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/dop251/goja"
)

// OnAdd calls the script's onAdd(obj, ctx). It is a no-op when the script has none.
func (s *Script) OnAdd(obj Object, ev Event) error {
	if s.onAdd == nil {
		return s.noop("onAdd")
	}
	return s.handle("onAdd", s.onAdd, ev, s.view(obj), s.ctxObj)
}

// OnUpdate calls the script's onUpdate(oldObj, newObj, ctx).
func (s *Script) OnUpdate(oldObj, newObj Object, ev Event) error {
	if s.onUpdate == nil {
		return s.noop("onUpdate")
	}
	return s.handle("onUpdate", s.onUpdate, ev, s.view(oldObj), s.view(newObj), s.ctxObj)
}

// OnDelete calls the script's onDelete(obj, ctx). For a tombstone pass its Obj (nil when the
// final state is unknown: the script receives null) and set ev.FinalStateUnknown.
func (s *Script) OnDelete(obj Object, ev Event) error {
	if s.onDelete == nil {
		return s.noop("onDelete")
	}
	return s.handle("onDelete", s.onDelete, ev, s.view(obj), s.ctxObj)
}

// handle runs an event handler under the call deadline with ev as the current event.
func (s *Script) handle(name string, fn goja.Callable, ev Event, args ...goja.Value) (err error) {
	if err := s.begin(name); err != nil {
		return err
	}
	defer s.end(&err)
	s.ev = ev
	_, err = s.call(s.defObj, fn, args...)
	return err
}

// Index calls indexers[name](obj) and returns its values. The function may return a string,
// an array of strings, or null/undefined for none. An unknown name returns nil.
func (s *Script) Index(name string, obj Object) (values []string, err error) {
	ix, ok := s.indexers[name]
	if !ok {
		return nil, s.noop("indexers." + name)
	}
	if err := s.begin(ix.label); err != nil {
		return nil, err
	}
	defer s.end(&err)
	v, err := s.call(s.indexersObj, ix.fn, s.view(obj))
	if err != nil {
		return nil, err
	}
	return s.indexValues(v)
}

func (s *Script) indexValues(v goja.Value) ([]string, error) {
	if isMissing(v) {
		return nil, nil
	}
	if isString(v) {
		return []string{v.String()}, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, s.resultError("must return a string, an array of strings, or null; got %s", typeName(v))
	}
	n := int(obj.Get("length").ToInteger())
	values := make([]string, 0, n)
	for i := range n {
		el := obj.Get(strconv.Itoa(i))
		if !isString(el) {
			return nil, s.resultError("returned an array whose element %d is %s, not a string", i, typeName(el))
		}
		values = append(values, el.String())
	}
	return values, nil
}

// isString reports whether v is a JS string, without exporting (copying) anything.
func isString(v goja.Value) bool {
	return v != nil && v.ExportType() == reflect.TypeFor[string]()
}

// Reconcile calls the script's reconcile(key, ctx). It may return nothing, or
// {requeueAfter} as a Go duration string ("30s") or a number of milliseconds.
func (s *Script) Reconcile(key string, ev Event) (res ReconcileResult, err error) {
	if s.reconcileFn == nil {
		return ReconcileResult{}, s.noop("reconcile")
	}
	if err := s.begin("reconcile"); err != nil {
		return ReconcileResult{}, err
	}
	defer s.end(&err)
	s.ev = ev
	v, err := s.call(s.defObj, s.reconcileFn, s.rt.ToValue(key), s.ctxObj)
	if err != nil {
		return ReconcileResult{}, err
	}
	return s.reconcileResult(v)
}

func (s *Script) reconcileResult(v goja.Value) (ReconcileResult, error) {
	if isMissing(v) {
		return ReconcileResult{}, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return ReconcileResult{}, s.resultError("must return nothing or {requeueAfter}; got %s", typeName(v))
	}
	after := obj.Get("requeueAfter")
	if isMissing(after) {
		return ReconcileResult{}, nil
	}
	d, err := parseRequeue(after)
	if err != nil {
		return ReconcileResult{}, s.resultError("returned an invalid requeueAfter: %v", err)
	}
	return ReconcileResult{RequeueAfter: d}, nil
}

// parseRequeue accepts a Go duration string or a number of milliseconds.
func parseRequeue(v goja.Value) (time.Duration, error) {
	var d time.Duration
	switch x := v.Export().(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(x); err != nil {
			return 0, err
		}
	case int64:
		d = time.Duration(x) * time.Millisecond
	case float64:
		d = time.Duration(x * float64(time.Millisecond))
	default:
		return 0, fmt.Errorf("want a duration string such as \"30s\" or milliseconds, got %s", typeName(v))
	}
	if d < 0 {
		return 0, fmt.Errorf("%s is negative", d)
	}
	return d, nil
}

// resultError reports a handler's return value that breaks the contract.
func (s *Script) resultError(format string, args ...any) *ScriptError {
	return &ScriptError{File: s.name, Message: s.callName + " " + fmt.Sprintf(format, args...)}
}
