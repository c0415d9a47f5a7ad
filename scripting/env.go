package scripting

import (
	"github.com/dop251/goja"
)

// callEnv is what the bindings of the globals share with the instance that runs them, and
// nothing more: the runtime, the built-ins captured before the script could replace them, and
// the Go errors behind the JS errors thrown during the current call. On it live the helpers
// every binding uses: throwing (throw.go), bounded export of values (limits.go, export.go,
// stringify.go), argument readers (args.go) and read-only views (view.go).
//
// Each global is a type of its own holding a callEnv and only what else it needs, the way
// goja_nodejs's console holds its runtime and k6's modules hold their VU: consoleModule and
// logModule (console.go), utilModule (util.go), k8sModule (k8s.go), ctxObject (ctx.go) with
// cacheObject (cache.go), defineScript (types.go); guardedBuiltins (guard.go) wraps the
// built-ins the same way. None of them sees the instance's definition, executor or deadline;
// the instance creates them in installGlobals (globals.go).
//
// Goroutines: a callEnv, and every binding holding one, is used only on the goroutine running
// its runtime: the instance's executor (executor.go). Nothing here locks.
type callEnv struct {
	rt        *goja.Runtime
	internals internals
	// goErrs are the Go errors behind the JS errors thrown during this call, so that an
	// uncaught throw surfaces as a *ScriptError wrapping its Go error; endCall forgets them.
	goErrs map[*goja.Object]error
	// pure names the running call when it must have no side effects ("validate", "mutate"),
	// "" otherwise; bindings with side effects check it (effects.go). endCall clears it.
	pure string
	// noEffects, when not "", names the kind of call running now that must be free of side
	// effects ("index functions"); bindings with side effects (fetch) throw naming it. Set by
	// instance.beginPure, cleared when the call ends. See "Side effects" in doc.go.
	noEffects string
}

// internalName names the runtime's own helper code; its frames are left out of stacks.
const internalName = "<jsinformer>"

// rethrowProgram throws its argument, turning a rejection value back into a goja exception
// (which carries an Error's original stack).
var rethrowProgram = goja.MustCompile(internalName, `(function (e) { throw e; })`, true)

// internals are runtime built-ins captured before the script could replace them.
type internals struct {
	rethrow        goja.Callable
	stringify      goja.Callable // the original JSON.stringify; scripts get stringify.go's
	parse          goja.Callable // the original JSON.parse
	isArray        goja.Callable
	errorCtor      *goja.Object
	rangeErrorCtor *goja.Object
}

// newCallEnv wraps rt; captureInternals must run before any binding is called.
func newCallEnv(rt *goja.Runtime) *callEnv { return &callEnv{rt: rt} }

// captureInternals captures the built-ins the bindings rely on. It runs before any script
// code, which could replace them.
func (e *callEnv) captureInternals() error {
	v, err := e.rt.RunProgram(rethrowProgram)
	if err != nil {
		return err
	}
	e.internals.rethrow, _ = goja.AssertFunction(v)
	json := e.rt.Get("JSON").ToObject(e.rt)
	e.internals.stringify, _ = goja.AssertFunction(json.Get("stringify"))
	e.internals.parse, _ = goja.AssertFunction(json.Get("parse"))
	e.internals.errorCtor = e.rt.Get("Error").ToObject(e.rt)
	e.internals.rangeErrorCtor = e.rt.Get("RangeError").ToObject(e.rt)
	e.internals.isArray, _ = goja.AssertFunction(e.rt.Get("Array").ToObject(e.rt).Get("isArray"))
	return nil
}

// endCall forgets what the call that has ended threw.
func (e *callEnv) endCall() {
	e.pure = ""
	e.noEffects = ""
	if len(e.goErrs) > 0 {
		clear(e.goErrs)
	}
}
