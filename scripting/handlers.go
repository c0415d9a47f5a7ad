package scripting

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/dop251/goja"
)

// OnAdd calls the script's onAdd(obj, ctx). It is a no-op when the script has none.
func (s *Script) OnAdd(obj Object, ev Event) error {
	if !s.def.OnAdd {
		return s.noop("onAdd")
	}
	return s.runHandler(handlerCall{kind: callAdd, obj: obj, ev: ev})
}

// OnUpdate calls the script's onUpdate(oldObj, newObj, ctx).
func (s *Script) OnUpdate(oldObj, newObj Object, ev Event) error {
	if !s.def.OnUpdate {
		return s.noop("onUpdate")
	}
	return s.runHandler(handlerCall{kind: callUpdate, old: oldObj, obj: newObj, ev: ev})
}

// OnDelete calls the script's onDelete(obj, ctx). For a tombstone pass its Obj (nil when the
// final state is unknown: the script receives null) and set ev.FinalStateUnknown.
func (s *Script) OnDelete(obj Object, ev Event) error {
	if !s.def.OnDelete {
		return s.noop("onDelete")
	}
	return s.runHandler(handlerCall{kind: callDelete, obj: obj, ev: ev})
}

// handlerCall is an event handler call waiting in Script.next for the runtime's goroutine.
// Passing it there instead of in a closure saves the closure and its arguments' allocation on
// every event.
type handlerCall struct {
	kind     callKind
	old, obj Object
	ev       Event
}

type callKind int

const (
	callAdd callKind = iota
	callUpdate
	callDelete
)

var callNames = [...]string{callAdd: "onAdd", callUpdate: "onUpdate", callDelete: "onDelete"}

// runHandler runs c on the current instance. The owner writes Script.next before the hand-over
// and the runtime's goroutine copies it out before the call's deadline is armed, so a call
// abandoned later never reads it again while the owner writes the next one.
func (s *Script) runHandler(c handlerCall) error {
	s.next = c
	return s.run(callNames[c.kind], s.handle)
}

// handleNext is the call Script.next describes, on in's goroutine; bound once per Script.
func (s *Script) handleNext(in *instance) error {
	c := s.next
	s.next = handlerCall{} // the objects are the caller's, not the Script's to keep
	args := in.args[:0]
	switch c.kind {
	case callAdd:
		args = append(args, in.view(c.obj), in.ctxObj)
		return in.handle(callNames[c.kind], in.onAdd, c.ev, args...)
	case callUpdate:
		args = append(args, in.view(c.old), in.view(c.obj), in.ctxObj)
		return in.handle(callNames[c.kind], in.onUpdate, c.ev, args...)
	default:
		args = append(args, in.view(c.obj), in.ctxObj)
		return in.handle(callNames[c.kind], in.onDelete, c.ev, args...)
	}
}

// Index calls indexers[name](obj) and returns its values. The function may return a string,
// an array of strings, or null/undefined for none. An unknown name returns nil.
func (s *Script) Index(name string, obj Object) ([]string, error) {
	label := "indexers." + name
	if _, ok := slices.BinarySearch(s.def.Indexers, name); !ok {
		return nil, s.noop(label)
	}
	var values []string
	err := s.run(label, func(in *instance) (err error) {
		values, err = in.index(name, obj)
		return err
	})
	if err != nil {
		return nil, err // values may still be written by an abandoned call: never read it here
	}
	return values, nil
}

// Reconcile calls the script's reconcile(key, ctx). It may return nothing, or
// {requeueAfter} as a Go duration string ("30s") or a number of milliseconds.
func (s *Script) Reconcile(key string, ev Event) (ReconcileResult, error) {
	if !s.def.Reconcile {
		return ReconcileResult{}, s.noop("reconcile")
	}
	var res ReconcileResult
	err := s.run("reconcile", func(in *instance) (err error) {
		res, err = in.reconcile(key, ev)
		return err
	})
	if err != nil {
		return ReconcileResult{}, err
	}
	return res, nil
}

// handle runs an event handler under the call deadline with ev as the current event.
func (s *instance) handle(name string, fn goja.Callable, ev Event, args ...goja.Value) (err error) {
	if err := s.begin(name); err != nil {
		return err
	}
	defer s.end(&err)
	s.ctx.ev = ev
	_, err = s.call(s.defObj, fn, args...)
	clear(s.args[:]) // args may be s.args: drop the views
	return err
}

func (s *instance) index(name string, obj Object) (values []string, err error) {
	ix := s.indexers[name]
	if err := s.beginPure(ix.label, "index functions"); err != nil {
		return nil, err
	}
	defer s.end(&err)
	v, err := s.call(s.indexersObj, ix.fn, s.view(obj))
	if err != nil {
		return nil, err
	}
	return s.indexValues(v)
}

func (s *instance) indexValues(v goja.Value) ([]string, error) {
	if isMissing(v) {
		return nil, nil
	}
	if isString(v) {
		if jsLength(v) > maxChars {
			return nil, s.resultError("returned a string of more than %d Mi characters", maxChars>>20)
		}
		return []string{v.String()}, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, s.resultError("must return a string, an array of strings, or null; got %s", typeName(v))
	}
	n := obj.Get("length").ToInteger()
	if n > maxItems {
		return nil, s.resultError("returned an array of %d values (the limit is %d)", n, maxItems)
	}
	values := make([]string, 0, n)
	chars := 0
	for i := range int(n) {
		el := obj.Get(strconv.Itoa(i))
		if !isString(el) {
			return nil, s.resultError("returned an array whose element %d is %s, not a string", i, typeName(el))
		}
		if chars += jsLength(el); chars > maxChars {
			return nil, s.resultError("returned more than %d Mi characters of values", maxChars>>20)
		}
		values = append(values, el.String())
	}
	return values, nil
}

// isString reports whether v is a JS string, without exporting (copying) anything.
func isString(v goja.Value) bool {
	return v != nil && v.ExportType() == reflect.TypeFor[string]()
}

func (s *instance) reconcile(key string, ev Event) (res ReconcileResult, err error) {
	if err := s.begin("reconcile"); err != nil {
		return ReconcileResult{}, err
	}
	defer s.end(&err)
	s.ctx.ev = ev
	v, err := s.call(s.defObj, s.reconcileFn, s.rt.ToValue(key), s.ctxObj)
	if err != nil {
		return ReconcileResult{}, err
	}
	return s.reconcileResult(v)
}

func (s *instance) reconcileResult(v goja.Value) (ReconcileResult, error) {
	if isMissing(v) {
		return ReconcileResult{}, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return ReconcileResult{}, s.resultError("must return nothing or {requeueAfter}; got %s", typeName(v))
	}
	for _, k := range obj.Keys() {
		if k != "requeueAfter" {
			msg := fmt.Sprintf("returned an object with the unknown key '%s'", k)
			if closest(k, reconcileKeys) != "" {
				msg += "; did you mean 'requeueAfter'?"
			} else {
				msg += "; it may only have requeueAfter"
			}
			return ReconcileResult{}, s.resultError("%s", msg)
		}
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

var reconcileKeys = []string{"requeueAfter"}

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

// resultError reports a handler's return value that breaks the contract, at the handler's
// line when it is known (resultLine).
func (s *instance) resultError(format string, args ...any) *ScriptError {
	return &ScriptError{File: s.name, Line: s.resultLine, Message: s.callName + " " + fmt.Sprintf(format, args...)}
}
