package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/status"
)

// The state API follows a script through its life: load, a handler's calls and errors, a
// failed save that keeps the old version, a reload that retires it, and the file's removal.
func TestStatusFollowsAScriptsLife(t *testing.T) {
	t.Parallel()
	ns := uniqueName("status")
	v1 := watchScript(ns, `  onAdd(cm) { if (cm.metadata.name === "bad") throw new Error("bad one"); },`)
	r := startEngine(t, map[string]string{"s.js": v1}, nil)
	r.namespace(t, ns)

	s := waitScript(t, r.engine, "s.js", "serving v1", func(s status.ScriptStatus) bool {
		cur, ok := s.Current()
		return ok && cur.Hash == hashOf(v1)
	})
	if s.State != status.ScriptServing || loads(s, status.LoadLoaded) != 1 {
		t.Fatalf("after start: state %s, loads %+v", s.State, s.Loads)
	}
	if len(s.Watches) != 1 || s.Watches[0].Resource != "v1/configmaps" || s.Watches[0].Namespace != ns {
		t.Fatalf("watches = %+v, want v1/configmaps in %s", s.Watches, ns)
	}

	r.create(t, configmapsGVR, configmap(ns, "good", nil, nil))
	r.create(t, configmapsGVR, configmap(ns, "bad", nil, nil))
	s = waitScript(t, r.engine, "s.js", "two onAdd calls, one failed", func(s status.ScriptStatus) bool {
		h := s.Handlers["onAdd"]
		return h.Calls == 2 && h.Errors == 1
	})
	if cur, _ := s.Current(); cur.Objects != 2 {
		t.Fatalf("current version's objects = %d, want 2", cur.Objects)
	}

	broken := "export default { onAdd( };\n"
	r.write(t, "s.js", broken)
	s = waitScript(t, r.engine, "s.js", "the broken save failed", func(s status.ScriptStatus) bool {
		_, ok := lastLoad(s, status.LoadFailed)
		return ok
	})
	failed, _ := lastLoad(s, status.LoadFailed)
	if failed.Hash != hashOf(broken) || failed.Error == nil || failed.Error.File != "s.js" || failed.Error.Line != 1 {
		t.Fatalf("failed load = %+v (error %+v), want s.js:1 of the broken hash", failed, failed.Error)
	}
	if cur, ok := s.Current(); !ok || cur.Hash != hashOf(v1) || s.State != status.ScriptServing {
		t.Fatalf("after a failed save: current %+v, state %s; want v1 still serving", cur, s.State)
	}
	if v, ok := s.Version(hashOf(broken)); !ok || v.State != status.VersionFailed {
		t.Fatalf("broken content's version = %+v, want failed", v)
	}

	v2 := watchScript(ns, `  onAdd(cm) {},`)
	r.write(t, "s.js", v2)
	// v2 and its load's entry appear together (Book.Serving); v1 is done a moment later.
	s = waitScript(t, r.engine, "s.js", "v2 serving, v1 done, the reload recorded", func(s status.ScriptStatus) bool {
		cur, ok := s.Current()
		old, found := s.Version(hashOf(v1))
		reloaded, recorded := lastLoad(s, status.LoadReloaded)
		return ok && cur.Hash == hashOf(v2) && found && old.State == status.VersionDone && recorded && reloaded.Hash == hashOf(v2)
	})
	reloaded, _ := lastLoad(s, status.LoadReloaded)
	if reloaded.Hash != hashOf(v2) || reloaded.Objects != 2 || reloaded.TookSeconds <= 0 {
		t.Fatalf("reload = %+v, want v2 shown 2 objects", reloaded)
	}
	if _, ok := s.Version(hashOf(broken)); ok {
		t.Fatal("the broken content is still listed after a good one loaded")
	}

	st := r.engine.Status()
	if !st.Ready || st.Leader.Enabled || !st.Leader.Leading {
		t.Fatalf("ready %v (%s), leader %+v; want ready and leading without election", st.Ready, st.NotReady, st.Leader)
	}
	if len(st.Informers) != 1 || !st.Informers[0].Synced || !st.Informers[0].Healthy || st.Informers[0].Objects != 2 ||
		strings.Join(st.Informers[0].Scripts, ",") != "s.js" {
		t.Fatalf("informers = %+v, want one synced healthy informer of 2 objects used by s.js", st.Informers)
	}
	if _, err := json.Marshal(st); err != nil {
		t.Fatalf("status does not marshal: %v", err)
	}

	mustDo(t, os.Remove(filepath.Join(r.dir, "s.js")))
	waitStatus(t, r.engine, "s.js gone once drained", func(st status.Status) bool {
		_, ok := st.Script("s.js")
		return !ok
	})
}
