package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/status"
)

// The state API through the loader's transitions, on fakes (-short).
func TestStatusThroughTheLoader(t *testing.T) {
	t.Parallel()
	source := newFakeSource(4)
	e := loaderEngine(t, source)
	script := func(name string) status.ScriptStatus {
		t.Helper()
		s, ok := e.Status().Script(name)
		if !ok {
			t.Fatalf("%s missing from status", name)
		}
		return s
	}
	changed := e.StatusChanged()
	e.loadContent("a.js", cmScript("v1", `onAdd() {}`))
	select {
	case <-changed:
	default:
		t.Fatal("loading a script did not signal a status change")
	}
	v1 := pending(e, "a.js")
	if s := script("a.js"); s.State != status.ScriptSyncing || len(s.Versions) != 1 || s.Versions[0].State != status.VersionSyncing {
		t.Fatalf("while syncing: %+v", s)
	}
	e.syncUntil(t, v1)
	s := script("a.js")
	if cur, ok := s.Current(); !ok || cur.Hash != v1.ver.Hash() || cur.Objects != 4 || s.State != status.ScriptServing {
		t.Fatalf("after sync: %+v", s)
	}
	if len(s.Loads) != 1 || s.Loads[0].Result != status.LoadLoaded || s.Loads[0].Objects != 4 {
		t.Fatalf("loads = %+v, want one load of 4 objects", s.Loads)
	}

	e.loadContent("a.js", "export default { onAdd( };")
	s = script("a.js")
	last := s.Loads[len(s.Loads)-1]
	if last.Result != status.LoadFailed || last.Error == nil || last.Error.Line != 1 || last.Error.Column == 0 {
		t.Fatalf("failed load = %+v, want its error at line 1 with a column", last)
	}
	if cur, _ := s.Current(); cur.Hash != v1.ver.Hash() || s.State != status.ScriptServing {
		t.Fatalf("after a failed save v1 must still serve: %+v", s)
	}

	e.loadContent("a.js", cmScript("v2", `onAdd() {}`))
	v2 := pending(e, "a.js")
	e.syncUntil(t, v2)
	waitState(t, v1, version.StateDone)
	s = script("a.js")
	if old, ok := s.Version(v1.ver.Hash()); !ok || old.State != status.VersionDone {
		t.Fatalf("v1 = %+v, want done", old)
	}
	if cur, _ := s.Current(); cur.Hash != v2.ver.Hash() || s.Loads[len(s.Loads)-1].Result != status.LoadReloaded {
		t.Fatalf("after reload: %+v", s)
	}
	if _, err := json.Marshal(e.Status()); err != nil {
		t.Fatal(err)
	}

	e.unload("a.js")
	deadline := time.Now().Add(10 * time.Second)
	for {
		changed := e.StatusChanged()
		if _, ok := e.Status().Script("a.js"); !ok {
			break
		}
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("a.js still in status after unload: %+v", script("a.js"))
		}
	}
}

// A file whose content never loaded leaves the state API when it is removed.
func TestStatusForgetsARemovedFileThatNeverLoaded(t *testing.T) {
	t.Parallel()
	e := loaderEngine(t, newFakeSource(1))
	e.loadContent("broken.js", "export default {")
	if s, ok := e.Status().Script("broken.js"); !ok || s.State != status.ScriptFailed {
		t.Fatalf("broken.js = %+v, want failed", s)
	}
	e.onPluginEvent(plugins.Event{Kind: plugins.Removed, Source: plugins.Source{Name: "broken.js"}})
	if s, ok := e.Status().Script("broken.js"); ok {
		t.Fatalf("broken.js still reported after its removal: %+v", s)
	}
}
