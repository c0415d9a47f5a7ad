package scripting

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// folder writes files (slash-separated names) into a new scripts folder.
func folder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// compileIn compiles name as the runner does, from the content on disk.
func compileIn(t *testing.T, dir, name string) (*Program, error) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return CompileIn(dir, name, src)
}

// tinyPackage is a pure-JS npm package as npm lays it out: CommonJS, a main field, a second
// file required by the first.
var tinyPackage = map[string]string{
	"node_modules/shout/package.json": `{"name": "shout", "version": "1.0.0", "main": "lib/index.js"}`,
	"node_modules/shout/lib/index.js": "const bang = require('./bang');\nmodule.exports = (s) => bang(s.toUpperCase());\n",
	"node_modules/shout/lib/bang.js":  "module.exports = function bang(s) { return s + '!'; };\n",
}

func withFiles(base map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{base, more} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestModulesAreBundled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entry   string
		files   map[string]string
		modules []string
	}{
		{name: "esm imports esm", entry: "a.js", files: map[string]string{
			"a.js":          `import { team } from "./lib/labels.js"; export default { onAdd(o) { globalThis.out = team(o) } }`,
			"lib/labels.js": `export function team(o) { return "team:" + o.metadata.labels.app }`,
		}, modules: []string{"lib/labels.js"}},
		{name: "cjs requires cjs without extension", entry: "team/b.js", files: map[string]string{
			"team/b.js":     `const { team } = require("../lib/labels"); module.exports = { onAdd(o) { globalThis.out = team(o) } }`,
			"lib/labels.js": `exports.team = (o) => "team:" + o.metadata.labels.app`,
		}, modules: []string{"lib/labels.js"}},
		{name: "transitive, and a folder's index", entry: "c.js", files: map[string]string{
			"c.js":             `import { team } from "./helpers"; export default { onAdd(o) { globalThis.out = team(o) } }`,
			"helpers/index.js": `export { team } from "../lib/labels.js"`,
			"lib/labels.js":    `import { prefix } from "./prefix.js"; export const team = (o) => prefix + o.metadata.labels.app`,
			"lib/prefix.js":    `export const prefix = "team:"`,
		}, modules: []string{"helpers/index.js", "lib/labels.js", "lib/prefix.js"}},
		{name: "typescript imports typescript and a type", entry: "d.ts", files: map[string]string{
			"d.ts": "import type { Obj } from \"./lib/types\";\nimport { team } from \"./lib/labels\";\n" +
				"export default { onAdd(o: Obj): void { (globalThis as any).out = team(o) } }\n",
			"lib/types.ts":  "export interface Obj { metadata: { labels: Record<string, string> } }\n",
			"lib/labels.ts": "import type { Obj } from \"./types\";\nexport const team = (o: Obj): string => \"team:\" + o.metadata.labels.app;\n",
		}, modules: []string{"lib/labels.ts"}},
		{name: "npm package", entry: "e.js", files: withFiles(tinyPackage, map[string]string{
			"e.js": `import shout from "shout"; export default { onAdd(o) { globalThis.out = shout("team:" + o.metadata.labels.app) } }`,
		}), modules: []string{"node_modules/shout/lib/bang.js", "node_modules/shout/lib/index.js"}},
		{name: "json data", entry: "f.js", files: map[string]string{
			"f.js":       `const teams = require("./teams.json"); module.exports = { onAdd(o) { globalThis.out = teams[o.metadata.labels.app] } }`,
			"teams.json": `{"web": "team:web"}`,
		}, modules: []string{"teams.json"}},
		{name: "a built-in's npm polyfill in the folder", entry: "g.js", files: map[string]string{
			"g.js": `import { EventEmitter } from "events";
				export default { onAdd(o) { const e = new EventEmitter(); e.on("x", (v) => { globalThis.out = v }); e.emit("x", "team:web") } }`,
			"node_modules/events/package.json": `{"name": "events", "main": "events.js"}`,
			"node_modules/events/events.js": `class EventEmitter { constructor() { this.h = {} }
				on(n, f) { this.h[n] = f } emit(n, v) { this.h[n](v) } }
				module.exports = { EventEmitter }`,
		}, modules: []string{"node_modules/events/events.js"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := folder(t, tt.files)
			p, err := compileIn(t, dir, tt.entry)
			if err != nil {
				t.Fatalf("CompileIn: %v", err)
			}
			if got := p.Modules(); !slices.Equal(got, tt.modules) {
				t.Errorf("Modules() = %q, want %q", got, tt.modules)
			}
			imports, err := Imports(dir, tt.entry, []byte(tt.files[tt.entry]))
			if err != nil || !slices.Equal(imports, tt.modules) {
				t.Errorf("Imports() = %q, %v; want %q", imports, err, tt.modules)
			}
			s, err := p.Instantiate(Options{})
			if err != nil {
				t.Fatalf("Instantiate: %v", err)
			}
			t.Cleanup(s.Interrupt)
			if err := s.OnAdd(sample(), Event{}); err != nil {
				t.Fatalf("OnAdd: %v", err)
			}
			want := `"team:web"`
			if tt.name == "npm package" {
				want = `"TEAM:WEB!"`
			}
			if got := outJSON(t, s); got != want {
				t.Errorf("out = %s, want %s", got, want)
			}
		})
	}
}

// TestModuleLoadErrors checks that what keeps a plugin from loading is reported in the file it
// is about, with the position of the offending import or token.
func TestModuleLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		files    map[string]string
		where    string // file:line:col
		msg      string
		imported []string // what Imports still reports
	}{
		{name: "syntax error in a module", files: map[string]string{
			"a.js":          "import { team } from \"./lib/labels.js\";\nexport default { onAdd() {} };\n",
			"lib/labels.js": "export function team(o) {\n  return o.metadata.labels.team +;\n}\n",
		}, where: "lib/labels.js:2:34", msg: `Unexpected ";"`, imported: []string{"lib/labels.js"}},
		{name: "missing import in the plugin", files: map[string]string{
			"a.js": "const x = 1;\nimport { team } from \"./lib/nope.js\";\nexport default { onAdd() {} };\n",
		}, where: "a.js:2:22", msg: `Could not resolve "./lib/nope.js"`},
		{name: "missing import in a module", files: map[string]string{
			"a.js":          "import { team } from \"./lib/labels.js\";\nexport default { onAdd() {} };\n",
			"lib/labels.js": "\n\nexport { prefix } from \"./prefix.js\";\n",
		}, where: "lib/labels.js:3:24", msg: `Could not resolve "./prefix.js"`, imported: []string{"lib/labels.js"}},
		{name: "missing npm package", files: map[string]string{
			"a.js": "import semver from \"semver\";\nexport default { onAdd() {} };\n",
		}, where: "a.js:1:20", msg: `Could not resolve "semver"`},
		{name: "node built-in", files: map[string]string{
			"a.js": "const fs = require(\"fs\");\nmodule.exports = { onAdd() {} };\n",
		}, where: "a.js:1:20", msg: `cannot import "fs": it is a Node.js built-in module`},
		{name: "node: built-in in a module", files: map[string]string{
			"a.js":      "import { run } from \"./lib/sh.js\";\nexport default { onAdd() {} };\n",
			"lib/sh.js": "import { execSync } from \"node:child_process\";\nexport const run = execSync;\n",
		}, where: "lib/sh.js:1:26", msg: `cannot import "node:child_process": it is a Node.js built-in module`, imported: []string{"lib/sh.js"}},
		{name: "built-in subpath", files: map[string]string{
			"a.js": "import { readFile } from \"fs/promises\";\nexport default { onAdd() {} };\n",
		}, where: "a.js:1:26", msg: `cannot import "fs/promises": it is a Node.js built-in module`},
		{name: "outside the folder", files: map[string]string{
			"team/a.js": "import x from \"../../outside.js\";\nexport default { onAdd() {} };\n",
		}, where: "team/a.js:1:15", msg: "outside the scripts folder"},
		{name: "rejected by goja only, in a module", files: map[string]string{
			"a.js":      "import { r } from \"./lib/re.js\";\nexport default { onAdd() { r } };\n",
			"lib/re.js": "const ok = 1;\nexport const r = /(?<a>x)/d;\n",
		}, where: "lib/re.js:2:18", msg: "Invalid flags", imported: []string{"lib/re.js"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := folder(t, tt.files)
			if tt.name == "outside the folder" {
				if err := os.WriteFile(filepath.Join(dir, "..", filepath.Base(dir)+"-outside.js"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "outside.js"), []byte("export default 1"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			entry := "a.js"
			if _, ok := tt.files[entry]; !ok {
				entry = "team/a.js"
			}
			_, err := compileIn(t, dir, entry)
			checkLoadError(t, err, tt.where, tt.msg)
			imported, ierr := Imports(dir, entry, []byte(tt.files[entry]))
			if tt.name != "rejected by goja only, in a module" && ierr == nil {
				t.Errorf("Imports succeeded")
			}
			if !slices.Equal(imported, tt.imported) {
				t.Errorf("Imports() = %q, want %q", imported, tt.imported)
			}
		})
	}
}

func checkLoadError(t *testing.T, err error, where, msg string) {
	t.Helper()
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want *ScriptError", err, err)
	}
	if !errors.Is(err, ErrSyntax) {
		t.Errorf("error does not wrap ErrSyntax: %v", err)
	}
	if !strings.HasPrefix(err.Error(), where+": ") || !strings.Contains(se.Message, msg) {
		t.Errorf("error = %q, want %s: ...%s...", err, where, msg)
	}
}

func TestDetachedScriptCannotImport(t *testing.T) {
	t.Parallel()
	_, err := Compile("a.js", []byte("import { team } from \"./lib/labels.js\";\nexport default { onAdd() {} };\n"))
	checkLoadError(t, err, "a.js:1:22", "compiled on its own, without its scripts folder")
	_, err = Compile("b.js", []byte("import \"net\";\nexport default { onAdd() {} };\n"))
	checkLoadError(t, err, "b.js:1:8", "Node.js built-in")
}

// TestStackPositionsInModules throws in a module two imports deep and checks every frame
// points at the file and line it runs, through esbuild's CommonJS wrappers.
func TestStackPositionsInModules(t *testing.T) {
	t.Parallel()
	dir := folder(t, withFiles(tinyPackage, map[string]string{
		"team/a.js": "import { check } from \"../lib/check.js\";\n\nexport default {\n  onAdd(o) {\n    check(o);\n  },\n};\n",
		"lib/check.js": "import shout from \"shout\";\nconst guard = require(\"./must.cjs\");\n\n" +
			"export function check(o) {\n  guard.must(shout(o.metadata.name), o.spec.paused);\n}\n",
		"lib/must.cjs": "// CommonJS\nexports.must = function must(what, ok) {\n  if (!ok) throw new Error(what + \" is not paused\");\n};\n",
	}))
	p, err := compileIn(t, dir, "team/a.js")
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Instantiate(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Interrupt)
	err = s.OnAdd(sample(), Event{})
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("OnAdd error = %v, want *ScriptError", err)
	}
	if want := "lib/must.cjs:3:18: Error: WEB! is not paused"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	wantStack := "at must (lib/must.cjs:3:18)\nat check (lib/check.js:5:9)\nat onAdd (team/a.js:5:5)"
	if se.Stack != wantStack {
		t.Errorf("stack:\n%s\nwant:\n%s", se.Stack, wantStack)
	}
}
