package scripting

import (
	_ "embed"
	"slices"

	"github.com/dop251/goja"
)

//go:embed jsinformer.d.ts
var declarations []byte

// Declarations is jsinformer.d.ts: TypeScript declarations of the globals scripts see, the
// definition object, ctx and ctx.cache, for editors and tsc. `runner types` writes it; a test
// keeps it in step with what Instantiate installs.
func Declarations() []byte { return slices.Clone(declarations) }

// defineScript is the defineScript global: the identity, so that
// `export default defineScript({...})` runs as `export default {...}` does while TypeScript
// checks the definition against ScriptDefinition.
type defineScript struct{ rt *goja.Runtime }

func (d defineScript) exports() (*goja.Object, error) {
	return d.rt.ToValue(func(call goja.FunctionCall) goja.Value {
		return call.Argument(0)
	}).ToObject(d.rt), nil
}
