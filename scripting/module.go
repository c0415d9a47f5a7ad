package scripting

import (
	"github.com/dop251/goja"
)

// internalName names the runtime's own helper code; its frames are left out of stacks.
const internalName = "<jsinformer>"

// rethrowProgram throws its argument, turning a rejection value back into a goja exception
// (which carries an Error's original stack).
var rethrowProgram = goja.MustCompile(internalName, `(function (e) { throw e; })`, true)

// internals are runtime built-ins captured before the script could replace them.
type internals struct {
	rethrow        goja.Callable
	stringify      goja.Callable // the original JSON.stringify; scripts get stringify.go's
	isArray        goja.Callable
	errorCtor      *goja.Object
	rangeErrorCtor *goja.Object
}

func (s *instance) captureInternals() error {
	v, err := s.rt.RunProgram(rethrowProgram)
	if err != nil {
		return s.scriptError(err)
	}
	s.internals.rethrow, _ = goja.AssertFunction(v)
	json := s.rt.Get("JSON").ToObject(s.rt)
	s.internals.stringify, _ = goja.AssertFunction(json.Get("stringify"))
	s.internals.errorCtor = s.rt.Get("Error").ToObject(s.rt)
	s.internals.rangeErrorCtor = s.rt.Get("RangeError").ToObject(s.rt)
	s.internals.isArray, _ = goja.AssertFunction(s.rt.Get("Array").ToObject(s.rt).Get("isArray"))
	return s.installGuards()
}

// runModule evaluates the CommonJS wrapper under the call deadline and returns
// module.exports.
func (s *instance) runModule(prg *goja.Program) (exports goja.Value, err error) {
	wrapper, err := s.rt.RunProgram(prg)
	if err != nil {
		return nil, s.scriptError(err)
	}
	fn, ok := goja.AssertFunction(wrapper)
	if !ok {
		return nil, &ScriptError{File: s.name, Message: "module wrapper is not a function"}
	}
	if err := s.begin("module"); err != nil {
		return nil, err
	}
	defer s.end(&err)
	module := s.rt.NewObject()
	exp := s.rt.NewObject()
	if err := module.Set("exports", exp); err != nil {
		return nil, s.scriptError(err)
	}
	if _, err := fn(goja.Undefined(), exp, s.rt.ToValue(s.require), module); err != nil {
		return nil, s.scriptError(err)
	}
	return module.Get("exports"), nil
}

// require is what is left of require() after bundling: a call whose argument esbuild could
// not read (a computed path). It fails with a clear message rather than a ReferenceError.
func (s *instance) require(call goja.FunctionCall) goja.Value {
	defer s.guard("require")
	s.throwf("require(%q) is not supported: only imports of a literal path are bundled; "+
		"write require(\"./lib/x.js\") or import ... from \"./lib/x.js\"", shorten(call.Argument(0)))
	return nil
}
