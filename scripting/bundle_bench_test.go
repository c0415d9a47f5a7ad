package scripting

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// packageFolder is a scripts folder whose plugin imports a CommonJS package of 48 small files
// requiring one another, the shape of npm's semver: what bundling costs for a real package.
func packageFolder(b *testing.B) (dir string, src []byte) {
	b.Helper()
	const n = 48
	files := map[string]string{
		"node_modules/pkg/package.json": `{"name": "pkg", "main": "index.js"}`,
		"node_modules/pkg/index.js":     "",
	}
	for i := range n {
		name := fmt.Sprintf("node_modules/pkg/lib/f%d.js", i)
		body := fmt.Sprintf("const re = /^v?(\\d+)\\.(\\d+)\\.(\\d+)$/;\nmodule.exports = function f%d(s) {\n"+
			"  const m = re.exec(s);\n  return m ? Number(m[1]) * 10000 + Number(m[2]) * 100 + Number(m[3]) + %d : -1;\n};\n", i, i)
		if i > 0 {
			body = fmt.Sprintf("const prev = require('./f%d');\n", i-1) + body
		}
		files[name] = body
		files["node_modules/pkg/index.js"] += fmt.Sprintf("exports.f%d = require('./lib/f%d');\n", i, i)
	}
	files["a.js"] = "import { f47 } from \"pkg\";\nexport default { onAdd(o) { globalThis.out = f47(o.metadata.name) } };\n"
	dir = b.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir, []byte(files["a.js"])
}

// BenchmarkCompileWithPackage is a plugin load's compile step with a 48-file package.
func BenchmarkCompileWithPackage(b *testing.B) {
	dir, src := packageFolder(b)
	for b.Loop() {
		if _, err := CompileIn(dir, "a.js", src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportsWithPackage is what the folder watcher pays to find that plugin's modules
// (once per change of the plugin or its modules; the result is cached otherwise).
func BenchmarkImportsWithPackage(b *testing.B) {
	dir, src := packageFolder(b)
	for b.Loop() {
		if _, err := Imports(dir, "a.js", src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileSingleFile is the compile step of a plugin that imports nothing.
func BenchmarkCompileSingleFile(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("..", "examples", "scripts", "05-replicate-secret.js"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Compile("05-replicate-secret.js", src); err != nil {
			b.Fatal(err)
		}
	}
}
