package engine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

// hashOf is the version the plugins watcher gives a content.
func hashOf(src string) string {
	sum := sha256.Sum256([]byte(src))
	return hex.EncodeToString(sum[:])[:12]
}

// taggedScript logs "hello" with its tag for every add in namespace ns.
func taggedScript(ns, tag string) string {
	return watchScript(ns, fmt.Sprintf(`  onAdd(cm, ctx) { log.info("hello", { tag: %q, name: cm.metadata.name, initial: ctx.isInInitialList }); },`, tag))
}

// addBy matches the add of key that content src of a.js handled, as an initial add or not
// (either when init is nil).
func addBy(src, key string, init *bool) func(inspection.TraceRecord) bool {
	return call{Script: "a.js", Version: hashOf(src), Event: "add", Object: key, Handler: "onAdd", Result: "ok", Initial: init}.match
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
}

func TestReloadOnEveryKindOfFileChange(t *testing.T) {
	t.Parallel()
	type change func(t *testing.T, dir, path, v2 string)
	tests := []struct {
		name    string
		change  change
		removed bool // the change takes the script away
	}{
		{"in-place write", func(t *testing.T, _, path, v2 string) { writeFile(t, path, v2) }, false},
		{"truncate then write", func(t *testing.T, _, path, v2 string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteString(v2[:10])
			_ = f.Sync()
			_, _ = f.WriteString(v2[10:])
			_ = f.Close()
		}, false},
		{"atomic save", func(t *testing.T, dir, path, v2 string) {
			tmp := filepath.Join(dir, ".a.js.tmp1234")
			writeFile(t, tmp, v2)
			mustDo(t, os.Rename(tmp, path))
		}, false},
		{"vim backup and rename", func(t *testing.T, dir, path, v2 string) {
			writeFile(t, filepath.Join(dir, "4913"), "")
			mustDo(t, os.Remove(filepath.Join(dir, "4913")))
			mustDo(t, os.Rename(path, path+"~"))
			writeFile(t, filepath.Join(dir, ".a.js.swp"), "swap")
			writeFile(t, path, v2)
			mustDo(t, os.Remove(path+"~"))
		}, false},
		{"cp over", func(t *testing.T, _, path, v2 string) {
			src := filepath.Join(t.TempDir(), "new.js")
			writeFile(t, src, v2)
			mustRun(t, "cp", src, path)
		}, false},
		{"mv in", func(t *testing.T, _, path, v2 string) {
			src := filepath.Join(t.TempDir(), "new.js")
			writeFile(t, src, v2)
			mustRun(t, "mv", src, path)
		}, false},
		{"mv out", func(t *testing.T, _, path, _ string) { mustRun(t, "mv", path, filepath.Join(t.TempDir(), "gone.js")) }, true},
		{"rm", func(t *testing.T, _, path, _ string) { mustDo(t, os.Remove(path)) }, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := uniqueName(fmt.Sprintf("reload-kind-%d", i))
			v1, v2 := taggedScript(ns, "v1"), taggedScript(ns, "v2")
			r := startEngine(t, map[string]string{"a.js": v1}, nil)
			r.namespace(t, ns)
			r.create(t, configmapsGVR, configmap(ns, "first", nil, nil))
			r.calls.waitFor(t, "v1 sees first", 1, addBy(v1, ns+"/first", nil))
			tt.change(t, r.dir, filepath.Join(r.dir, "a.js"), v2)
			if tt.removed {
				waitGone(t, r, "a.js")
				waitInformers(t, r, 0)
				return
			}
			waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(v2))
			r.calls.waitFor(t, "v2 gets the cache as initial adds", 1, addBy(v2, ns+"/first", initial(true)))
			r.create(t, configmapsGVR, configmap(ns, "second", nil, nil))
			r.calls.waitFor(t, "v2 sees second", 1, addBy(v2, ns+"/second", initial(false)))
			if got := r.calls.find(call{Script: "a.js", Version: hashOf(v1), Object: ns + "/second"}.match); len(got) != 0 {
				t.Fatal("the old version still handled events after the reload")
			}
			if n := countLoads(r, "a.js", status.LoadFailed); n != 0 {
				t.Fatalf("a half-written file was loaded: %d failed loads", n)
			}
		})
	}
}

func TestReloadThroughConfigMapVolumeSymlinks(t *testing.T) {
	t.Parallel()
	ns := uniqueName("reload-configmap")
	r := startEngine(t, nil, nil)
	dir := r.dir
	writeFile(t, filepath.Join(dir, "..2026_01", "a.js"), taggedScript(ns, "v1"))
	mustDo(t, os.Symlink("..2026_01", filepath.Join(dir, "..data")))
	mustDo(t, os.Symlink(filepath.Join("..data", "a.js"), filepath.Join(dir, "a.js")))
	waitLoad(t, r, "a.js", status.LoadLoaded, "")
	v2 := taggedScript(ns, "v2")
	writeFile(t, filepath.Join(dir, "..2026_02", "a.js"), v2)
	mustDo(t, os.Symlink("..2026_02", filepath.Join(dir, "..data_tmp")))
	mustDo(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(v2))
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "x", nil, nil))
	r.calls.waitFor(t, "v2 serves", 1, addBy(v2, ns+"/x", nil))
}

func TestBrokenSaveKeepsOldVersionUntilFixed(t *testing.T) {
	t.Parallel()
	ns := uniqueName("reload-broken")
	v1 := taggedScript(ns, "v1")
	r := startEngine(t, map[string]string{"a.js": v1}, nil)
	r.namespace(t, ns)
	broken := "export default {\n  watch: \"configmaps\",\n  onAdd(cm) { log.info(\"x\" }\n};\n"
	r.write(t, "a.js", broken)
	failed := waitLoad(t, r, "a.js", status.LoadFailed, hashOf(broken))
	if e := failed.Error; e == nil || e.File != "a.js" || e.Line != 3 || e.Column == 0 || !strings.Contains(e.Message, "a.js:3:") {
		t.Fatalf("load error %+v lacks a.js:3:col", e)
	}
	r.create(t, configmapsGVR, configmap(ns, "during", nil, nil))
	r.calls.waitFor(t, "v1 still serving", 1, addBy(v1, ns+"/during", nil))
	r.write(t, "a.js", broken) // the same broken content again: no second report
	invalid := watchScript(ns, `  onAdd: "not a function",`)
	r.write(t, "a.js", invalid)
	waitLoad(t, r, "a.js", status.LoadFailed, hashOf(invalid))
	v2 := taggedScript(ns, "v2")
	r.write(t, "a.js", v2)
	waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(v2))
	r.calls.waitFor(t, "v2 sees the cache", 1, addBy(v2, ns+"/during", nil))
	if n := countLoads(r, "a.js", status.LoadFailed); n != 2 {
		t.Fatalf("%d failed loads, want 2 (one per distinct broken content)", n)
	}
	// The operator's contract: each distinct failure is logged once, as an ERROR.
	if got := r.log.find(msg("script not loaded", "script", "a.js")); len(got) != 2 || got[0].level != slog.LevelError {
		t.Fatalf("load failures logged %v, want 2 ERRORs", got)
	}
}

func TestReloadChangesIndexFunction(t *testing.T) {
	t.Parallel()
	ns := uniqueName("reload-index")
	script := func(field string) string {
		return watchScript(ns, fmt.Sprintf(`  indexers: { by: (cm) => [cm.data.%s] },
  onAdd(cm, ctx) {
    if (cm.metadata.name.startsWith("probe")) log.info("probe", { name: cm.metadata.name, keys: ctx.cache.indexKeys("by", "blue").join(",") });
  },`, field))
	}
	reg := prometheus.NewPedanticRegistry()
	r := startEngine(t, map[string]string{"a.js": script("color")}, func(c *engine.Config) { c.Registerer = reg })
	r.namespace(t, ns)
	r.create(t, configmapsGVR, configmap(ns, "a", nil, map[string]any{"color": "blue", "shade": "red"}))
	r.create(t, configmapsGVR, configmap(ns, "b", nil, map[string]any{"color": "red", "shade": "blue"}))
	r.create(t, configmapsGVR, configmap(ns, "probe", nil, map[string]any{"color": "x", "shade": "x"}))
	probe := func(src, name, keys string) func(inspection.TraceRecord) bool {
		return call{Script: "a.js", Version: hashOf(src), Object: ns + "/" + name, Result: "ok", Logged: "probe", Attrs: map[string]string{"keys": keys}}.match
	}
	r.calls.waitFor(t, "index by color", 1, probe(script("color"), "probe", ns+"/a"))
	v2 := script("shade")
	r.write(t, "a.js", v2)
	reloaded := waitLoad(t, r, "a.js", status.LoadReloaded, hashOf(v2))
	if reloaded.TookSeconds <= 0 || reloaded.Objects != 3 {
		t.Errorf("reload took %vs with %d objects, want a positive duration and 3", reloaded.TookSeconds, reloaded.Objects)
	}
	for _, result := range []string{"loaded", "reloaded"} {
		if n := loadsObserved(t, reg, "a.js", result); n != 1 {
			t.Errorf("jsinformer_script_load_duration_seconds{result=%q} counted %d loads, want 1", result, n)
		}
	}
	// A probe created after the reload is handled after every initial add of the new version,
	// so its answer covers all cached objects, indexed by the new function.
	r.create(t, configmapsGVR, configmap(ns, "probe2", nil, map[string]any{"color": "x", "shade": "x"}))
	r.calls.waitFor(t, "index by shade after reload", 1, probe(v2, "probe2", ns+"/b"))
}

func TestReloadChangingWatchMovesInformers(t *testing.T) {
	t.Parallel()
	r := startEngine(t, map[string]string{"a.js": taggedScript("reload-watch-a", "a")}, nil)
	waitInformers(t, r, 1, "namespace=reload-watch-a")
	r.write(t, "a.js", taggedScript("reload-watch-b", "b"))
	waitLoad(t, r, "a.js", status.LoadReloaded, "")
	waitInformers(t, r, 1, "namespace=reload-watch-b")
	mustDo(t, os.Remove(filepath.Join(r.dir, "a.js")))
	waitInformers(t, r, 0)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	mustDo(t, os.MkdirAll(filepath.Dir(path), 0o755))
	mustDo(t, os.WriteFile(path, []byte(content), 0o644))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// loadsObserved is the sample count of the load-duration histogram for script and result.
func loadsObserved(t *testing.T, reg prometheus.Gatherer, script, result string) uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "jsinformer_script_load_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["script"] == script && labels["result"] == result {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}
