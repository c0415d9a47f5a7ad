package jstest

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/jsinformer/jsinformer/scripting"
)

//go:embed expect.js
var expectSource string

// expectProgram is the assertion library, compiled once for every runtime.
var expectProgram = goja.MustCompile(expectName, expectSource, true)

// expectName is the file name of the assertion library's frames, left out of positions.
const expectName = "<expect>"

// fileRun is one test file being run: its runtime (owned by the goroutine of RunFile), the
// tests it declared and the harnesses the current test opened.
type fileRun struct {
	ctx   context.Context
	name  string // as shown: the path given, slash-separated
	dir   string // for plugin and fixture paths, which are relative to the test file
	prg   *scripting.Program
	opts  Options
	rt    *goja.Runtime
	tests []*testCase
	scope *scope // where test and hook declarations go now

	stringify, parse, rethrow goja.Callable
	pretty                    goja.Callable
	harnesses                 []*harness

	// The folder's admission scripts, found on the first harness that needs them.
	admissionFound  bool
	folderAdmission []string
}

// scope is the file or a describe block: its name prefix and hooks.
type scope struct {
	parent        *scope
	prefix        string
	before, after []goja.Callable
}

type testCase struct {
	name  string
	fn    goja.Callable
	scope *scope
	skip  bool
}

func newFileRun(ctx context.Context, name, dir string, prg *scripting.Program, opts Options) (*fileRun, error) {
	f := &fileRun{ctx: ctx, name: name, dir: dir, prg: prg, opts: opts, rt: goja.New(), scope: &scope{}}
	f.rt.SetMaxCallStackSize(4096)
	if err := f.install(); err != nil {
		return nil, fmt.Errorf("set up the test runtime: %w", err)
	}
	return f, nil
}

// install defines the globals of test files.
func (f *fileRun) install() error {
	jsonObj := f.rt.Get("JSON").ToObject(f.rt)
	f.stringify, _ = goja.AssertFunction(jsonObj.Get("stringify"))
	f.parse, _ = goja.AssertFunction(jsonObj.Get("parse"))
	rethrow, err := f.rt.RunString(`(function (e) { throw e; })`)
	if err != nil {
		return err
	}
	f.rethrow, _ = goja.AssertFunction(rethrow)
	lib, err := f.expectLibrary()
	if err != nil {
		return err
	}
	f.pretty, _ = goja.AssertFunction(lib.Get("pretty"))
	test := f.rt.ToValue(f.declare(false)).ToObject(f.rt)
	if err := test.Set("skip", f.declare(true)); err != nil {
		return err
	}
	for name, v := range map[string]any{
		"test": test, "it": test, "describe": f.describe, "beforeEach": f.hook(true), "afterEach": f.hook(false),
		"expect": lib.Get("expect"), "harness": f.newHarness, "console": f.console(),
	} {
		if err := f.rt.Set(name, v); err != nil {
			return err
		}
	}
	return nil
}

func (f *fileRun) expectLibrary() (*goja.Object, error) {
	v, err := f.rt.RunProgram(expectProgram)
	if err != nil {
		return nil, err
	}
	fn, _ := goja.AssertFunction(v)
	host := f.rt.NewObject()
	if err := host.Set("diff", lineDiff); err != nil {
		return nil, err
	}
	lib, err := fn(goja.Undefined(), host)
	if err != nil {
		return nil, err
	}
	return lib.ToObject(f.rt), nil
}

// declare is test(name, fn), or test.skip.
func (f *fileRun) declare(skip bool) func(name string, fn goja.Value) {
	return func(name string, fn goja.Value) {
		call, ok := goja.AssertFunction(fn)
		if !ok && !skip {
			f.throw(fmt.Errorf("test(%q, fn): fn must be a function", name))
		}
		f.tests = append(f.tests, &testCase{name: f.scope.prefix + name, fn: call, scope: f.scope, skip: skip})
	}
}

// describe(name, fn) groups the tests fn declares: their names get "name > " in front and
// the hooks fn declares apply to them only.
func (f *fileRun) describe(name string, fn goja.Value) {
	call, ok := goja.AssertFunction(fn)
	if !ok {
		f.throw(fmt.Errorf("describe(%q, fn): fn must be a function", name))
	}
	outer := f.scope
	f.scope = &scope{parent: outer, prefix: outer.prefix + name + " > "}
	defer func() { f.scope = outer }()
	if _, err := call(goja.Undefined()); err != nil {
		panic(err) // rethrown as it came: a throw in a describe body fails the file
	}
}

func (f *fileRun) hook(before bool) func(fn goja.Value) {
	return func(fn goja.Value) {
		call, ok := goja.AssertFunction(fn)
		if !ok {
			f.throw(errors.New("beforeEach/afterEach(fn): fn must be a function"))
		}
		if before {
			f.scope.before = append(f.scope.before, call)
		} else {
			f.scope.after = append(f.scope.after, call)
		}
	}
}

// console writes what test files print to Options.Output, one line per call.
func (f *fileRun) console() *goja.Object {
	c := f.rt.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		_ = c.Set(level, func(call goja.FunctionCall) goja.Value {
			parts := make([]string, len(call.Arguments))
			for i, a := range call.Arguments {
				if s, ok := a.Export().(string); ok {
					parts[i] = s
				} else {
					parts[i] = f.show(a)
				}
			}
			fmt.Fprintf(f.opts.Output, "%s: %s\n", f.name, strings.Join(parts, " "))
			return goja.Undefined()
		})
	}
	return c
}

func (f *fileRun) require(call goja.FunctionCall) goja.Value {
	f.throw(fmt.Errorf("require(%q) is not supported: a test file is a single file", call.Argument(0).String()))
	return nil
}

// throw throws a JS Error for err from a Go function; an API error gets code and reason.
func (f *fileRun) throw(err error) {
	obj, cerr := f.rt.New(f.rt.Get("Error"), f.rt.ToValue(err.Error()))
	if cerr != nil {
		panic(f.rt.NewGoError(err))
	}
	if code, reason, ok := apiStatus(err); ok {
		_ = obj.Set("code", code)
		_ = obj.Set("reason", reason)
	}
	panic(obj)
}

// show renders a value as assertion messages do.
func (f *fileRun) show(v goja.Value) string {
	s, err := f.pretty(goja.Undefined(), v)
	if err != nil {
		return v.String()
	}
	return s.String()
}

// toGo copies a JS value into Go data, as JSON carries it (numbers become int64 or float64).
func (f *fileRun) toGo(v goja.Value) (any, error) {
	s, err := f.stringify(goja.Undefined(), v)
	if err != nil {
		return nil, err
	}
	if goja.IsUndefined(s) {
		return nil, nil
	}
	var out any
	if err := utiljson.Unmarshal([]byte(s.String()), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// toJS copies Go data into a plain, mutable JS value.
func (f *fileRun) toJS(v any) goja.Value {
	data, err := json.Marshal(v)
	if err != nil {
		f.throw(err)
	}
	out, err := f.parse(goja.Undefined(), f.rt.ToValue(string(data)))
	if err != nil {
		f.throw(err)
	}
	return out
}

// failure describes an error a test (or the file) ended with, positioned in the test file.
func (f *fileRun) failure(err error) *Failure {
	fl := &Failure{}
	var frames []goja.StackFrame
	var ex *goja.Exception
	var intr *goja.InterruptedError
	switch {
	case errors.As(err, &intr):
		frames = intr.Stack()
		fl.Message = "the test timed out after " + f.opts.Timeout.String()
		if _, ok := intr.Value().(timeoutMark); !ok {
			fl.Message = "interrupted: " + fmt.Sprint(intr.Value())
		}
	case errors.As(err, &ex):
		frames = ex.Stack()
		f.describeThrown(fl, ex.Value())
	default:
		fl.Message = err.Error()
	}
	f.locate(fl, frames)
	return fl
}

// describeThrown fills the message (and, for a failed assertion, the values) of a throw.
func (f *fileRun) describeThrown(fl *Failure, v goja.Value) {
	obj, ok := v.(*goja.Object)
	if !ok {
		fl.Message = "thrown: " + f.show(v)
		return
	}
	if obj.Get("name") != nil && obj.Get("name").String() == "AssertionError" {
		fl.Message = obj.Get("message").String()
		fl.Expected, fl.Received = obj.Get("expected").String(), obj.Get("received").String()
		fl.Diff = obj.Get("diff").String()
		return
	}
	if obj.ClassName() == "Error" {
		fl.Message = obj.Get("name").String() + ": " + obj.Get("message").String()
		return
	}
	fl.Message = "thrown: " + f.show(v)
}

// locate points the failure at the innermost frame in the test file, and lists the test
// file's frames as its stack.
func (f *fileRun) locate(fl *Failure, frames []goja.StackFrame) {
	var stack []string
	for i := range frames {
		line, col, ok := f.prg.Position(&frames[i])
		if !ok {
			continue
		}
		if fl.File == "" {
			fl.File, fl.Line, fl.Column = f.name, line, col
		}
		stack = append(stack, "at "+frames[i].FuncName()+" ("+f.name+":"+strconv.Itoa(line)+":"+strconv.Itoa(col)+")")
	}
	fl.Stack = strings.Join(stack, "\n")
}
