package engine_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/plugins"
	"github.com/jsinformer/jsinformer/status"
)

// Tests of the module examples 09-11, each running the example files unchanged.

// examples reads several files of examples/scripts, unchanged.
func examples(t *testing.T, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range names {
		for k, v := range example(t, name) {
			out[k] = v
		}
	}
	return out
}

func labelled(d map[string]any, labels map[string]any) map[string]any {
	d["metadata"].(map[string]any)["labels"] = labels
	return d
}

func TestExample09And10ShareAModule(t *testing.T) {
	t.Parallel()
	r := startEngine(t, examples(t, "09-require-labels.js", "10-team-deployments.js", "lib/labels.js"), asGenerated(t))
	defer r.checkGranted(t)
	var loaded []string
	for _, s := range r.engine.Status().Scripts {
		loaded = append(loaded, s.Name)
	}
	if want := []string{"09-require-labels.js", "10-team-deployments.js"}; !slices.Equal(loaded, want) {
		t.Fatalf("ready with %v, want the 2 plugins %v and not lib/labels.js", loaded, want)
	}
	ns := r.namespace(t, uniqueName("ex09"))
	team := ns // a team of this test's own, so counts ignore other tests' Deployments
	r.create(t, deploymentsGVR, deployment(ns, "web", "nginx:1.27", 1))
	r.calls.waitFor(t, "09 reports the missing labels", 1, call{Script: "09-require-labels.js", Logged: "missing labels",
		Attrs: map[string]string{"deployment": ns + "/web", "missing": "app.kubernetes.io/name,team"}}.match)

	r.patch(t, deploymentsGVR, ns, "web", `{"metadata":{"labels":{"app.kubernetes.io/name":"web","team":"`+team+`"}}}`)
	r.calls.waitFor(t, "09 sees the labels fixed", 1, call{Script: "09-require-labels.js", Logged: "labels complete",
		Attrs: map[string]string{"deployment": ns + "/web"}}.match)
	teamCount := func(count, deployments string) func(inspection.TraceRecord) bool {
		return call{Script: "10-team-deployments.js", Logged: "team deployments",
			Attrs: map[string]string{"team": team, "count": count, "deployments": deployments}}.match
	}
	r.calls.waitFor(t, "10 counts web in its team", 1, teamCount("1", ns+"/web"))

	r.create(t, deploymentsGVR, labelled(deployment(ns, "api", "nginx:1.27", 1),
		map[string]any{"app.kubernetes.io/name": "api", "team": team}))
	r.calls.waitFor(t, "10 counts both", 1, teamCount("2", ns+"/api,"+ns+"/web"))
	r.delete(t, deploymentsGVR, ns, "web")
	r.calls.waitFor(t, "10 counts api alone", 1, teamCount("1", ns+"/api"))
	if got := r.calls.find(call{Script: "09-require-labels.js", Logged: "missing labels", Attrs: map[string]string{"deployment": ns + "/api"}}.match); len(got) > 0 {
		t.Errorf("09 reported a fully labelled Deployment: %v", got)
	}
}

// TestExample11NpmPackage installs the examples' package.json (semver, pinned) with npm from
// the registry, as a user would, after the plugin has failed to load for want of it: the runner
// watches node_modules and loads the plugin once the package is there.
func TestExample11NpmPackage(t *testing.T) {
	t.Parallel()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("this test installs examples/scripts/package.json with npm, which is not on PATH (%v): install Node.js and npm", err)
	}
	r := startEngine(t, examples(t, "11-outdated-images.js", "package.json"), slowModules)
	failed := waitLoad(t, r, "11-outdated-images.js", status.LoadFailed, "")
	if e := failed.Error; e == nil || !strings.Contains(e.Message, `Could not resolve "semver"`) {
		t.Fatalf("error = %+v, want it to name the missing package", e)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund")
	install.Dir = r.dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install in the scripts folder: %v\n%s", err, out)
	}
	waitLoad(t, r, "11-outdated-images.js", status.LoadLoaded, "")

	ns := r.namespace(t, uniqueName("ex11"))
	r.create(t, deploymentsGVR, deployment(ns, "current", "registry.local:5000/library/nginx:1.27.3", 1))
	r.create(t, deploymentsGVR, deployment(ns, "old", "nginx:1.24-alpine", 1))
	outdated := func(key string, attrs ...string) func(inspection.TraceRecord) bool {
		want := map[string]string{"deployment": key}
		for i := 0; i+1 < len(attrs); i += 2 {
			want[attrs[i]] = attrs[i+1]
		}
		return call{Script: "11-outdated-images.js", Logged: "outdated image", Attrs: want}.match
	}
	r.calls.waitFor(t, "the old image flagged", 1, outdated(ns+"/old", "image", "nginx:1.24-alpine", "version", "1.24.0", "minimum", "1.25.0"))
	r.patch(t, deploymentsGVR, ns, "old", `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.23"}]}}}}`)
	r.calls.waitFor(t, "the downgrade flagged", 1, outdated(ns+"/old", "version", "1.23.0"))
	if got := r.calls.find(outdated(ns + "/current")); len(got) > 0 {
		t.Errorf("a current image was flagged: %v", got)
	}
}

// TestExamplesFolderAsTheDemoRunsIt runs the whole examples/scripts folder with its npm package
// installed and --gvr apps/v1/deployments, as `make demo` does: every numbered example loads,
// and lib/labels.js, the declaration files and package.json are not plugins.
func TestExamplesFolderAsTheDemoRunsIt(t *testing.T) {
	t.Parallel()
	files := examplesFolder(t)
	for name, content := range npmInstall(t, files["package.json"]) {
		files[name] = content
	}
	applyWidgetCRD(t, startEngine(t, nil, nil))
	r := startEngine(t, files, func(c *engine.Config) {
		c.Resources = []string{"apps/v1/deployments"}
		slowModules(c)
	})
	var want []string
	for name := range files {
		if !strings.Contains(name, "/") && !plugins.IsTestFile(name) && (strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".ts") && !strings.HasSuffix(name, ".d.ts")) {
			want = append(want, name)
		}
	}
	if len(want) < 11 {
		t.Fatalf("only %d examples found: %v", len(want), want)
	}
	st := r.engine.Status()
	for _, name := range want {
		s, _ := st.Script(name)
		if n := loads(s, status.LoadLoaded); n != 1 || s.State != status.ScriptServing {
			t.Errorf("%s: loaded %d times, state %q; want once, serving", name, n, s.State)
		}
		if n := loads(s, status.LoadFailed); n > 0 {
			t.Errorf("%s: %d failed loads: %+v", name, n, s.Loads)
		}
	}
	if len(st.Scripts) != len(want) {
		var names []string
		for _, s := range st.Scripts {
			names = append(names, s.Name)
		}
		t.Errorf("%d scripts known, want the %d examples: %v", len(st.Scripts), len(want), names)
	}
}

// examplesFolder reads examples/scripts, without any node_modules, as name -> content.
func examplesFolder(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "examples", "scripts")
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// npmInstall installs a package.json's dependencies with npm into a new folder and returns the
// node_modules files, as name -> content.
func npmInstall(t *testing.T, packageJSON string) map[string]string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("this test installs examples/scripts/package.json with npm, which is not on PATH (%v): install Node.js and npm", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(packageJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	files := map[string]string{}
	err = filepath.WalkDir(filepath.Join(dir, "node_modules"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// slowModules lifts the harness's 2 s handler timeout, which also bounds a module's top-level
// code: semver compiles dozens of regular expressions when it loads, which under the race
// detector on a loaded 2-core machine took more than 2 s. These tests are about finding and
// loading the package, not about its speed.
func slowModules(c *engine.Config) { c.HandlerTimeout = 30 * time.Second }
