package scripting

import (
	"fmt"

	"github.com/dop251/goja"
)

// A Program need not be a plugin: `runner test` compiles test files with Compile too (the
// same ESM/TypeScript transform and source maps) and runs them in a runtime of its own,
// with globals of its own, through RunModule and Position.

// RunModule evaluates the program's CommonJS wrapper in rt, with require as its require,
// and returns module.exports. It sets no deadline and installs nothing: rt and its globals
// belong to the caller. Errors are goja's, for the caller to interpret with Position.
func (p *Program) RunModule(rt *goja.Runtime, require func(goja.FunctionCall) goja.Value) (goja.Value, error) {
	wrapper, err := rt.RunProgram(p.prg)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(wrapper)
	if !ok {
		return nil, fmt.Errorf("run %s: module wrapper is not a function", p.name)
	}
	module := rt.NewObject()
	exports := rt.NewObject()
	if err := module.Set("exports", exports); err != nil {
		return nil, err
	}
	if _, err := fn(goja.Undefined(), exports, rt.ToValue(require), module); err != nil {
		return nil, err
	}
	return module.Get("exports"), nil
}

// Position maps a stack frame of a runtime running this program to the original source
// (TypeScript included); false for frames in other code or in generated helpers.
func (p *Program) Position(f *goja.StackFrame) (line, col int, ok bool) {
	_, line, col, ok = sourcePosition(p.name, f.Position())
	return line, col, ok
}
