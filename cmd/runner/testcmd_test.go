package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/plugins"
)

// `runner test`: in-process, no control plane (these run with -short too).

// TestExamplesPassTheirTests runs every example's tests: `go test ./...` (and so `make test`)
// runs `runner test` over a copy of examples/scripts with its npm packages installed (example
// 11 imports semver). Without npm it fails, saying so.
func TestExamplesPassTheirTests(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("installs npm packages (not run with -short)")
	}
	dir := filepath.Join("..", "..", "examples", "scripts")
	copied := t.TempDir() // all of examples/: test fixtures read ../crds
	if err := os.CopyFS(copied, os.DirFS(filepath.Dir(dir))); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(copied, "scripts")
	install := exec.CommandContext(t.Context(), "npm", "install", "--no-audit", "--no-fund", "--ignore-scripts")
	install.Dir = work
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install in a copy of examples/scripts (example 11 needs semver; npm must be installed): %v\n%s", err, out)
	}
	out, err := execute(t, t.Context(), "test", work)
	if err != nil {
		t.Fatalf("runner test %s: %v\n%s", dir, err, out)
	}
	if !strings.Contains(out, " passed, 0 failed\n") || strings.Contains(out, "FAIL") {
		t.Fatalf("output:\n%s", out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || plugins.IsTestFile(name) || strings.HasSuffix(name, ".d.ts") || strings.HasSuffix(name, ".json") {
			continue // modules, declarations, package and compiler settings: not plugins
		}
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		if !strings.Contains(out, stem+".test.") {
			t.Errorf("example %s has no test file run by runner test", name)
		}
	}
}

func writeTests(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const plugin = `export default { watch: "v1/configmaps", onAdd(cm) { log.info("seen", { name: cm.metadata.name }); } };`

func TestRunnerTestExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		code  int
		want  string
	}{
		{"all pass", map[string]string{"p.js": plugin, "p.test.js": `test("ok", () => { expect(harness("./p.js").logs).toEqual([]); });`},
			nil, 0, "1 passed, 0 failed"},
		{"a failure", map[string]string{"p.test.js": "test(\"a\", () => {});\ntest(\"b\", () => {\n  expect(1).toBe(2);\n});"},
			nil, 1, "p.test.js:3:"},
		{"a file that cannot load", map[string]string{"p.test.js": `test("a", () => {`}, nil, 2, "ERROR"},
		{"no test files", map[string]string{"p.js": plugin}, nil, 2, "no *.test.js"},
		// A policy of the folder with a syntax error fails the run, with its file and line,
		// though no test uses it (issue 44: "6 passed", exit 0).
		{"a plugin with a syntax error", map[string]string{"p.js": plugin, "p.test.js": `test("ok", () => { harness("./p.js"); });`,
			"policy.js": "export default {\n  watch: \"v1/configmaps\",\n  validate(obj) { return obj.metadata. }\n};"},
			nil, 2, "does not load: policy.js:3:40: "},
		{"a plugin with an invalid definition", map[string]string{"p.js": plugin, "p.test.js": `test("ok", () => { harness("./p.js"); });`,
			"bad.js": "export default {\n  watch: \"v1/configmaps\",\n  onAdd: 5,\n};"},
			nil, 2, "does not load: bad.js:3: 'onAdd' must be a function"},
		{"unknown flag", map[string]string{"p.test.js": `test("a", () => {});`}, []string{"--nope"}, 2, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTests(t, tt.files)
			out, err := execute(t, t.Context(), append(append([]string{"test"}, tt.args...), dir)...)
			code := 0
			var exit *exitError
			if errors.As(err, &exit) {
				code = exit.code
			} else if err != nil {
				code = -1
			}
			if code != tt.code || !strings.Contains(out+errString(err), tt.want) {
				t.Fatalf("exit %d (%v), want %d; output lacks %q:\n%s", code, err, tt.code, tt.want, out)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRunnerTestJSON(t *testing.T) {
	t.Parallel()
	dir := writeTests(t, map[string]string{"p.test.js": "test(\"eq\", () => {\n  expect({ a: [1, 2] }).toEqual({ a: [1, 3] });\n});"})
	out, err := execute(t, t.Context(), "test", "--json", dir)
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != 1 {
		t.Fatalf("err = %v, want exit code 1", err)
	}
	var doc struct {
		Files []struct {
			Tests []struct {
				Status  string
				Failure struct {
					Diff         string
					Line, Column int
				}
			}
		}
		Summary struct{ Passed, Failed int }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	f := doc.Files[0].Tests[0].Failure
	if doc.Summary.Failed != 1 || f.Line != 2 || !strings.Contains(f.Diff, "-     3,\n+     2,") {
		t.Fatalf("results %+v", doc)
	}
}
