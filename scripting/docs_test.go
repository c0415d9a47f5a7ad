package scripting_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/scripting"
)

// docsPath is the script API reference whose examples TestDocsExamplesLoad keeps honest.
var docsPath = filepath.Join("..", "docs", "scripts.md")

// docBlock is one complete script found in the docs.
type docBlock struct {
	lang string // "js" or "ts": the fence's info string, and the file extension it loads under
	line int    // 1-based line of the opening fence
	src  string
}

// TestDocsExamplesLoad loads every complete script in docs/scripts.md as the runner would:
// compile, run the top-level code, validate the definition. An example that stops loading
// fails here rather than in a reader's cluster.
//
// Convention for docs/scripts.md: a block fenced as ```js or ```ts that contains
// `export default` or `module.exports` is a complete script and must load. Fragments (snippets
// using obj or ctx out of context, expected output) use another fence, such as ```javascript
// or ```text, or contain no export; they are skipped. No cluster is involved, so a complete
// script must not call k8s at the top level.
func TestDocsExamplesLoad(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("read the script API reference: %v", err)
	}
	blocks := scriptBlocks(string(doc))
	if len(blocks) == 0 {
		t.Fatalf("%s has no complete ```js or ```ts script: this test would prove nothing", docsPath)
	}
	for _, b := range blocks {
		name := fmt.Sprintf("scripts.md-line-%d.%s", b.line, b.lang)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := load(t, name, b.src); err != nil {
				t.Errorf("%s:%d: the example does not load: %v", docsPath, docLine(b, err), err)
			}
		})
	}
}

// load compiles and instantiates src; the instance is interrupted when the test ends.
func load(t *testing.T, name, src string) error {
	p, err := scripting.Compile(name, []byte(src))
	if err != nil {
		return err
	}
	s, err := p.Instantiate(scripting.Options{})
	if err != nil {
		return err
	}
	t.Cleanup(s.Interrupt)
	return nil
}

// docLine is the line of the docs an error points at: the block's line when the error has none.
func docLine(b docBlock, err error) int {
	var se *scripting.ScriptError
	if errors.As(err, &se) && se.Line > 0 {
		return b.line + se.Line // the block's first line follows the fence
	}
	return b.line
}

// scriptBlocks returns the complete scripts among the fenced blocks of a Markdown document.
// Fences may be indented (inside list items); the indent is removed from the block's lines.
func scriptBlocks(doc string) []docBlock {
	var out []docBlock
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		indent, info, ok := fence(lines[i])
		if !ok {
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines); i++ {
			if _, _, closing := fence(lines[i]); closing {
				break
			}
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		src := strings.Join(body, "\n") + "\n"
		if (info == "js" || info == "ts") && isCompleteScript(src) {
			out = append(out, docBlock{lang: info, line: start + 1, src: src})
		}
	}
	return out
}

// fence reports whether line opens or closes a fenced block, with its indent and info string.
func fence(line string) (indent, info string, ok bool) {
	trimmed := strings.TrimLeft(line, " ")
	if !strings.HasPrefix(trimmed, "```") {
		return "", "", false
	}
	fields := strings.Fields(strings.TrimPrefix(trimmed, "```"))
	if len(fields) > 0 {
		info = fields[0]
	}
	return line[:len(line)-len(trimmed)], info, true
}

func isCompleteScript(src string) bool {
	return strings.Contains(src, "export default") || strings.Contains(src, "module.exports")
}

func TestScriptBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      []docBlock
	}{
		{"esm js", "# t\n```js\nexport default {};\n```\n",
			[]docBlock{{lang: "js", line: 2, src: "export default {};\n"}}},
		{"commonjs and ts", "```js\nmodule.exports = {};\n```\ntext\n```ts\nconst a: number = 1;\nexport default {};\n```\n",
			[]docBlock{{lang: "js", line: 1, src: "module.exports = {};\n"}, {lang: "ts", line: 5, src: "const a: number = 1;\nexport default {};\n"}}},
		{"indented in a list item", "- item\n\n  ```js\n  export default {\n    onAdd() {},\n  };\n  ```\n",
			[]docBlock{{lang: "js", line: 3, src: "export default {\n  onAdd() {},\n};\n"}}},
		{"fragment fence skipped", "```javascript\nexport default {};\n```\n", nil},
		{"text fence skipped", "```text\nmodule.exports = {};\n```\n", nil},
		{"js without export skipped", "```js\nconst x = util.clone(obj);\n```\n", nil},
		{"shell block between", "```sh\nrunner --gvr deploy\n```\n```js\nexport default {};\n```\n",
			[]docBlock{{lang: "js", line: 4, src: "export default {};\n"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := scriptBlocks(tt.doc); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("scriptBlocks =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

// TestDocsExamplesTableListsEveryExample: the examples table of docs/scripts.md has a row for
// every plugin of examples/scripts (modules, tests, declarations and settings are not plugins).
func TestDocsExamplesTableListsEveryExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join("..", "examples", "scripts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.Contains(name, ".test.") || strings.HasSuffix(name, ".d.ts") || strings.HasSuffix(name, ".json") {
			continue
		}
		if !strings.Contains(string(doc), "\n| `"+name+"` | ") {
			t.Errorf("docs/scripts.md's examples table has no row for examples/scripts/%s", name)
		}
	}
}
