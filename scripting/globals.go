package scripting

import "github.com/dop251/goja"

// global is the binding of one JS global (env.go): exports builds the value scripts see
// under its name.
type global interface {
	exports() (*goja.Object, error)
}

// installGlobals captures the built-ins the bindings rely on and guards the ones that walk a
// length (guard.go), then defines console, log, util, k8s and defineScript and prepares the
// handlers' ctx object. It runs first in init, so every call (begin/end) comes after it.
func (s *instance) installGlobals() error {
	if err := s.captureInternals(); err != nil {
		return s.scriptError(err)
	}
	if err := (&guardedBuiltins{callEnv: s.callEnv}).install(); err != nil {
		return err
	}
	for _, g := range []struct {
		name   string
		global global
	}{
		{"console", newConsole(s.callEnv, s.log)},
		{"log", newLog(s.callEnv, s.log)},
		{"util", newUtil(s.callEnv, s.now)},
		{"k8s", newK8s(s.callEnv, s.client, s.context)},
		{"defineScript", defineScript{s.rt}},
	} {
		obj, err := g.global.exports()
		if err != nil {
			return err
		}
		if err := s.rt.Set(g.name, obj); err != nil {
			return err
		}
	}
	if err := s.fetch.install(); err != nil {
		return err
	}
	s.ctx = newCtx(s.callEnv, s.name)
	s.ctx.store = newStoreObject(s.callEnv, s.store, &s.def.Store, s.context).exports()
	s.ctx.outbox = (&outboxObject{callEnv: s.callEnv, outbox: s.outbox, ctx: s.context,
		defined: func() bool { return s.deliverFn != nil }}).exports()
	s.ctxObj = s.rt.NewDynamicObject(s.ctx)
	return nil
}
