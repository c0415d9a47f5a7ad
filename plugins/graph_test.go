package plugins

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeImports stands in for scripting.Imports (which the engine's tests use for real): a
// script imports the files named by its lines `use <name>` (relative to the folder), and
// their own, transitively. A missing file fails the bundle; the files read are still returned.
type fakeImports struct{ calls atomic.Int32 }

var useLine = regexp.MustCompile(`(?m)^use (\S+)$`)

func (f *fakeImports) imports(dir, name string, content []byte) ([]string, error) {
	f.calls.Add(1)
	seen := map[string]bool{}
	var missing error
	var visit func(content []byte)
	visit = func(content []byte) {
		for _, m := range useLine.FindAllSubmatch(content, -1) {
			dep := string(m[1])
			if seen[dep] || dep == name {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(dep)))
			if err != nil {
				missing = errors.Join(missing, fmt.Errorf("could not resolve %q", dep))
				continue
			}
			seen[dep] = true
			visit(data)
		}
	}
	visit(content)
	return slices.Sorted(maps.Keys(seen)), missing
}

// scanOf reads files from dir as the scanner would, for graph.plugins.
func scanOf(t *testing.T, dir string) map[string]Source {
	t.Helper()
	sc := scanner{root: dir, exts: defaultExtensions, log: slog.New(slog.DiscardHandler), watch: func(string) {}, readFile: os.ReadFile}
	snap, _, err := sc.scan()
	mustDo(t, err)
	return snap
}

// version computes the Hash a plugin with these modules must get, independently of graph.
func versionOf(t *testing.T, dir, name string, modules ...string) string {
	t.Helper()
	if len(modules) == 0 {
		return hashContent(read(t, dir, name))
	}
	s := hashContent(read(t, dir, name))
	for _, m := range modules {
		s += "\n" + m + " " + hashContent(read(t, dir, m))
	}
	return hashContent([]byte(s))
}

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	mustDo(t, err)
	return b
}

func describePlugins(snap map[string]Source) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(snap)) {
		out = append(out, fmt.Sprintf("%s %s %v", name, snap[name].Hash, snap[name].Modules))
	}
	return out
}

func TestGraphTellsModulesFromPlugins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"a.js":              "use lib/labels.js\n",
		"b.js":              "use helpers.js\n",
		"helpers.js":        "use lib/labels.js\nuse data.json\n",
		"data.json":         "{}",
		"c.js":              "plain\n",
		"lib/labels.js":     "use lib/prefix.js\n",
		"lib/prefix.js":     "prefix\n",
		"team/lib/x.js":     "a team's module, never used\n",
		"library/y.js":      "not a lib folder\n",
		"broken.js":         "use helpers.js\nuse nope.js\n",
		"node_modules/p.js": "never scanned\n",
	} {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	f := &fakeImports{}
	g := newGraph(dir, f.imports, slog.New(slog.DiscardHandler), func(string) {})
	got, retry := g.plugins(scanOf(t, dir))
	labels := []string{"lib/labels.js", "lib/prefix.js"}
	helpers := []string{"data.json", "helpers.js", "lib/labels.js", "lib/prefix.js"}
	want := []string{
		fmt.Sprintf("a.js %s %v", versionOf(t, dir, "a.js", labels...), labels),
		fmt.Sprintf("b.js %s %v", versionOf(t, dir, "b.js", helpers...), helpers),
		fmt.Sprintf("broken.js %s %v", versionOf(t, dir, "broken.js", helpers...), helpers),
		fmt.Sprintf("c.js %s []", versionOf(t, dir, "c.js")),
		fmt.Sprintf("library/y.js %s []", versionOf(t, dir, "library/y.js")),
	}
	if d := describePlugins(got); !slices.Equal(d, want) || retry {
		t.Fatalf("plugins (retry %v):\n got %q\nwant %q", retry, d, want)
	}

	// Unchanged files are not bundled again, except the one that failed.
	calls := f.calls.Load()
	if again, _ := g.plugins(scanOf(t, dir)); !slices.Equal(describePlugins(again), want) {
		t.Fatalf("second scan differs: %q", describePlugins(again))
	}
	if n := f.calls.Load() - calls; n != 1 {
		t.Errorf("the second scan bundled %d scripts, want 1 (broken.js)", n)
	}
}

// TestGraphVersions changes modules and checks which plugins get a new version.
func TestGraphVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(t *testing.T, dir string)
		changed []string // plugins whose Hash changes
		gone    []string // plugins that become modules or disappear
		retry   bool
	}{
		{name: "a direct import", changed: []string{"a.js", "b.js"},
			change: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "helpers.js"), "use lib/labels.js\n// v2\n")
			}},
		{name: "a transitive import", changed: []string{"a.js", "b.js", "c.js"},
			change: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "lib/labels.js"), "v2\n") }},
		{name: "a file that is not a script", changed: []string{"c.js"},
			change: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "node_modules/pkg/index.js"), "v2\n") }},
		{name: "a plugin starts importing another", changed: []string{"d.js"}, gone: []string{"e.js"},
			change: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "d.js"), "use e.js\n") }},
		{name: "a missing import appears", changed: []string{"f.js"},
			change: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "lib/later.js"), "here now\n") }},
		{name: "a module emptied is held back once", retry: true,
			change: func(t *testing.T, dir string) { mustDo(t, os.Truncate(filepath.Join(dir, "lib/labels.js"), 0)) }},
		{name: "a module deleted", changed: []string{"a.js", "b.js", "c.js"},
			change: func(t *testing.T, dir string) { mustDo(t, os.Remove(filepath.Join(dir, "lib/labels.js"))) }},
		{name: "an unrelated plugin", changed: []string{"e.js"},
			change: func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "e.js"), "v2\n") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range map[string]string{
				"a.js": "use helpers.js\n", "b.js": "use helpers.js\n", "helpers.js": "use lib/labels.js\n",
				"c.js": "use lib/labels.js\nuse node_modules/pkg/index.js\n", "lib/labels.js": "v1\n",
				"node_modules/pkg/index.js": "v1\n",
				"d.js":                      "alone\n", "e.js": "alone too\n", "f.js": "use lib/later.js\n",
			} {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
			}
			g := newGraph(dir, (&fakeImports{}).imports, slog.New(slog.DiscardHandler), func(string) {})
			before, _ := g.plugins(scanOf(t, dir))
			tt.change(t, dir)
			after, retry := g.plugins(scanOf(t, dir))
			var changed, gone []string
			for _, name := range slices.Sorted(maps.Keys(before)) {
				switch a, ok := after[name]; {
				case !ok:
					gone = append(gone, name)
				case a.Hash != before[name].Hash:
					changed = append(changed, name)
				}
			}
			if !slices.Equal(changed, tt.changed) || !slices.Equal(gone, tt.gone) || retry != tt.retry {
				t.Errorf("changed %q, gone %q, retry %v; want %q, %q, %v", changed, gone, retry, tt.changed, tt.gone, tt.retry)
			}
			if tt.retry { // the next quiet period takes the empty content
				final, retry := g.plugins(scanOf(t, dir))
				if final["c.js"].Hash == before["c.js"].Hash || retry {
					t.Errorf("after one more quiet period: c.js %s (was %s), retry %v", final["c.js"].Hash, before["c.js"].Hash, retry)
				}
			}
		})
	}
}

// TestModuleSaves runs the watcher: saving a module reloads exactly the plugins importing it.
func TestModuleSaves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"a.js": "use lib/labels.js\n", "b.js": "use helpers.js\n", "helpers.js": "use lib/labels.js\n",
		"c.js": "alone\n", "lib/labels.js": "v1\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	h := start(t, dir, Options{Debounce: fast, Imports: (&fakeImports{}).imports})
	initial := strings.Join(describeAll(h.rec.all()), "\n")
	for _, module := range []string{"helpers.js", "lib/labels.js"} {
		if strings.Contains(initial, " "+module+" ") {
			t.Fatalf("module %s was emitted:\n%s", module, initial)
		}
	}

	atomicWrite(t, filepath.Join(dir, "lib", "labels.js"), "v2\n")
	h.waitFor("both importers reloaded", func([]string) bool { return len(h.changes()) >= 2 })
	h.settle()
	want := []string{
		"Loaded a.js " + versionOf(t, dir, "a.js", "lib/labels.js"),
		"Loaded b.js " + versionOf(t, dir, "b.js", "helpers.js", "lib/labels.js"),
	}
	if got := h.changes(); !slices.Equal(got, want) {
		t.Fatalf("after saving lib/labels.js:\n got %q\nwant %q", got, want)
	}
}

// TestInstallingAPackage checks that node_modules, which is not walked, is watched: a plugin
// whose package was missing reloads once it is installed.
func TestInstallingAPackage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.js"), "use node_modules/pkg/index.js\n")
	writeFile(t, filepath.Join(dir, "node_modules", ".package-lock.json"), "{}")
	h := start(t, dir, Options{Debounce: fast, Imports: (&fakeImports{}).imports})
	// As npm does: unpack elsewhere, then move the package folder into node_modules.
	staging := t.TempDir()
	writeFile(t, filepath.Join(staging, "pkg", "index.js"), "v1\n")
	mustDo(t, os.Rename(filepath.Join(staging, "pkg"), filepath.Join(dir, "node_modules", "pkg")))
	want := "Loaded a.js " + versionOf(t, dir, "a.js", "node_modules/pkg/index.js")
	h.waitFor(want, func(evs []string) bool { return slices.Contains(evs, want) })
}
