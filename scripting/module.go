package scripting

import (
	"github.com/dop251/goja"
)

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
	if err := s.beginPure("module", "a module's top level"); err != nil {
		return nil, err
	}
	defer s.end(&err)
	module := s.rt.NewObject()
	exp := s.rt.NewObject()
	if err := module.Set("exports", exp); err != nil {
		return nil, s.scriptError(err)
	}
	if _, err := fn(goja.Undefined(), exp, s.rt.ToValue(newRequire(s.callEnv)), module); err != nil {
		return nil, s.scriptError(err)
	}
	return module.Get("exports"), nil
}

// newRequire is what is left of require() after bundling: a call whose argument esbuild could
// not read (a computed path). It fails with a clear message rather than a ReferenceError.
func newRequire(e *callEnv) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		defer e.guard("require")
		e.throwf("require(%q) is not supported: only imports of a literal path are bundled; "+
			"write require(\"./lib/x.js\") or import ... from \"./lib/x.js\"", shorten(call.Argument(0)))
		return nil
	}
}
