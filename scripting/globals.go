package scripting

import "github.com/dop251/goja"

// installGlobals captures the built-ins the bindings rely on, then defines console, log,
// util, k8s and defineScript and prepares the handlers' ctx object.
func (s *instance) installGlobals() error {
	if err := s.captureInternals(); err != nil {
		return err
	}
	for _, g := range []struct {
		name string
		make func() (*goja.Object, error)
	}{
		{"console", s.newConsole},
		{"log", s.newLog},
		{"util", s.newUtil},
		{"k8s", s.newK8s},
		{"defineScript", s.newDefineScript},
	} {
		obj, err := g.make()
		if err != nil {
			return err
		}
		if err := s.rt.Set(g.name, obj); err != nil {
			return err
		}
	}
	s.ctxObj = s.newCtx()
	return nil
}
