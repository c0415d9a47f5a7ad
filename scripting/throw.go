package scripting

import (
	"fmt"
	"reflect"

	"github.com/dop251/goja"
)

// How bindings fail: a Go function exposed to JS throws a JS exception, never returns an
// error or lets a Go panic unwind through goja. A thrown Error remembers the Go error behind
// it, so an uncaught throw surfaces as a *ScriptError wrapping it (jserror.go).

// newError creates the JS Error a binding throws for err, remembering err for goErrorOf.
func (e *callEnv) newError(err error) *goja.Object {
	obj, cerr := e.rt.New(e.internals.errorCtor, e.rt.ToValue(err.Error()))
	if cerr != nil {
		obj = e.rt.NewGoError(err)
	}
	e.remember(obj, err)
	return obj
}

// remember makes err the Go error behind obj, for goErrorOf.
func (e *callEnv) remember(obj *goja.Object, err error) {
	if e.goErrs == nil {
		e.goErrs = make(map[*goja.Object]error)
	}
	e.goErrs[obj] = err
}

// goErrorOf returns the Go error behind an exception thrown by a binding, if any.
func (e *callEnv) goErrorOf(x *goja.Exception) error {
	if obj, ok := x.Value().(*goja.Object); ok {
		if err, ok := e.goErrs[obj]; ok {
			return err
		}
	}
	return x.Unwrap()
}

// guard, deferred by every Go function exposed to JS, turns a Go panic into a JS exception
// that unwinds through goja like any throw. goja's own panics (throws, interrupts) pass
// through untouched.
func (e *callEnv) guard(what string) {
	r := recover()
	if r == nil {
		return
	}
	if isGojaPanic(r) {
		panic(r)
	}
	panic(e.newError(fmt.Errorf("%w in %s: %v", ErrPanic, what, r)))
}

func isGojaPanic(r any) bool {
	t := reflect.TypeOf(r)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() == "github.com/dop251/goja"
}

// throwf throws a JS Error from a binding.
func (e *callEnv) throwf(format string, args ...any) {
	panic(e.newError(fmt.Errorf(format, args...)))
}

// throwRange throws a JS RangeError from a binding.
func (e *callEnv) throwRange(format string, args ...any) {
	panic(e.rangeError(fmt.Sprintf(format, args...)))
}

func (e *callEnv) rangeError(msg string) *goja.Object {
	obj, err := e.rt.New(e.internals.rangeErrorCtor, e.rt.ToValue(msg))
	if err != nil {
		return e.rt.NewTypeError(msg)
	}
	return obj
}

// readOnly is the TypeError a write to a read-only object throws.
func (e *callEnv) readOnly() *goja.Object { return e.rt.NewTypeError(readOnlyMessage) }
