package scripting

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// scriptError converts an error returned by goja into a *ScriptError positioned at the
// innermost frame of the script's source.
func (s *instance) scriptError(err error) *ScriptError {
	var se *ScriptError
	if errors.As(err, &se) {
		return se
	}
	e := &ScriptError{File: s.name}
	var frames []goja.StackFrame
	switch x := err.(type) { //nolint:errorlint // goja returns its errors unwrapped
	case *goja.InterruptedError:
		frames = x.Stack()
		e.Message, e.Err = s.interruptCause(x.Value())
	case *goja.StackOverflowError:
		frames = x.Stack()
		e.Message = "RangeError: Maximum call stack size exceeded"
	case *goja.Exception:
		frames = x.Stack()
		e.Message = truncate(s.describe(x.Value()), maxMessage)
		e.Err = s.goErrorOf(x)
	default:
		e.Message = err.Error()
	}
	s.locate(e, frames)
	return e
}

func (s *instance) interruptCause(v any) (string, error) {
	if _, ok := v.(timeoutMark); ok {
		return s.timedOut(""), ErrTimeout
	}
	return s.callName + ": " + ErrInterrupted.Error(), ErrInterrupted
}

// timedOut is the message of a call that ran out of time, what it waited for (if anything)
// after the duration.
func (s *instance) timedOut(waiting string) string {
	if waiting != "" {
		waiting = " (" + waiting + ")"
	}
	if s.byRequest {
		return fmt.Sprintf("%s timed out after %s%s, at the admission request's deadline", s.callName, s.callLimit.Round(time.Millisecond), waiting)
	}
	return fmt.Sprintf("%s timed out after %s%s", s.callName, s.callLimit, waiting)
}

// maxMessage bounds the message of a thrown value, which is logged on one line.
const maxMessage = 16 << 10

// truncate cuts msg to at most n bytes (on a rune boundary), saying how much was left out.
func truncate(msg string, n int) string {
	if len(msg) <= n {
		return msg
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", msg[:cut], len(msg)-cut)
}

// describe renders a thrown value as "Name: message" without running script code where it
// can be avoided; a throwing toString falls back to a placeholder.
func (e *callEnv) describe(v goja.Value) (msg string) {
	if v == nil {
		return "undefined"
	}
	defer func() {
		if recover() != nil {
			msg = "<exception that cannot be printed>"
		}
	}()
	obj, ok := v.(*goja.Object)
	if !ok {
		return v.String()
	}
	if obj.ClassName() == "Error" {
		return obj.Get("name").String() + ": " + obj.Get("message").String()
	}
	if j := e.describeJSON(obj); j != "" {
		return j // a thrown plain object reads better as JSON than as [object Object]
	}
	return v.String()
}

// describeJSON is obj as JSON within the limits of one value, or "" when it has no JSON form,
// cannot be serialized, or is too large.
func (e *callEnv) describeJSON(obj *goja.Object) (j string) {
	defer func() {
		if recover() != nil {
			j = ""
		}
	}()
	if v := e.stringify("describe", obj, goja.Undefined(), goja.Undefined()); !isMissing(v) {
		return v.String()
	}
	return ""
}

// locate fills position and stack from frames. The position is the innermost frame in the
// original sources, the script's or a module's; the stack leaves out the runtime's internal
// helpers and is capped.
func (s *instance) locate(e *ScriptError, frames []goja.StackFrame) {
	lines := make([]string, 0, min(len(frames), 2*stackHead))
	for i := range frames {
		f := &frames[i]
		if f.SrcName() == internalName || strings.HasPrefix(f.FuncName(), bindingPrefix) {
			continue // our helpers and Go bindings: the calling JS frame says where
		}
		lines = append(lines, s.frameLine(e, f))
	}
	e.Stack = strings.Join(capFrames(lines), "\n")
}

func (s *instance) frameLine(e *ScriptError, f *goja.StackFrame) string {
	src, line, col, ok := sourcePosition(s.name, f.Position())
	switch {
	case ok:
		if e.Line == 0 {
			e.File, e.Line, e.Column = src, line, col
		}
		return "at " + f.FuncName() + " (" + src + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ")"
	case f.SrcName() == "<native>":
		return "at " + f.FuncName() + " (native)"
	}
	return "at " + f.FuncName() + " (" + s.name + ", generated code)"
}

// A stack keeps its first stackHead and last stackTail frames: runaway recursion would
// otherwise log thousands of identical lines.
const (
	stackHead = 20
	stackTail = 5
)

func capFrames(lines []string) []string {
	if len(lines) <= stackHead+stackTail+1 {
		return lines
	}
	omitted := len(lines) - stackHead - stackTail
	out := make([]string, 0, stackHead+1+stackTail)
	out = append(out, lines[:stackHead]...)
	out = append(out, fmt.Sprintf("... %d frames omitted ...", omitted))
	return append(out, lines[len(lines)-stackTail:]...)
}

// bindingPrefix starts the names goja gives this package's Go functions.
var bindingPrefix = reflect.TypeFor[instance]().PkgPath() + "."

// unescape undoes the URL escaping goja applies when it resolves source-map file names.
func unescape(name string) string {
	if u, err := url.PathUnescape(name); err == nil {
		return u
	}
	return name
}

// recovered converts a panic caught at the call boundary.
func (s *instance) recovered(r any) *ScriptError {
	switch x := r.(type) {
	case *goja.Exception:
		return s.scriptError(x)
	case *goja.InterruptedError:
		return s.scriptError(x)
	case *goja.StackOverflowError:
		return s.scriptError(x)
	case goja.Value:
		return &ScriptError{File: s.name, Message: truncate(s.describe(x), maxMessage)}
	}
	err := fmt.Errorf("%w in %s: %v", ErrPanic, s.callName, r)
	return &ScriptError{File: s.name, Message: err.Error(), Err: err}
}

// settle unwraps a promise returned by an async handler. Jobs run before goja returns to Go,
// and k8s calls are synchronous, so a promise is settled unless it waits for something that
// can never happen within the call.
func (s *instance) settle(v goja.Value) (goja.Value, error) {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ExportType() != promiseType {
		return v, nil
	}
	p := obj.Export().(*goja.Promise)
	if err := s.waitFetches(p); err != nil {
		return nil, err
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result(), nil
	case goja.PromiseStateRejected:
		_, err := s.internals.rethrow(goja.Undefined(), p.Result())
		return nil, s.scriptError(err)
	default:
		return nil, &ScriptError{File: s.name, Message: s.callName +
			" returned a promise that is still pending with no fetch in flight; " +
			"a handler may await k8s calls, fetch and promises they settle, nothing else"}
	}
}

var promiseType = reflect.TypeFor[*goja.Promise]()
