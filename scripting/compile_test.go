package scripting

import (
	"errors"
	"strings"
	"testing"
)

func TestCompileModuleForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, src string
	}{
		{"esm default", "a.js", `export default { onAdd() { globalThis.out = "ran" } }`},
		{"esm default with named exports", "a.mjs", `export const x = "ran"; export default { onAdd() { globalThis.out = x } }`},
		{"cjs module.exports", "b.js", `module.exports = { onAdd() { globalThis.out = "ran" } }`},
		{"cjs exports alias", "b.cjs", `exports.onAdd = function () { globalThis.out = "ran" }`},
		{"typescript", "c.ts", "interface Obj { metadata: { name: string } }\n" +
			"const name = (o: Obj): string => o.metadata.name;\n" +
			"enum Mode { A = 'ran' }\n" +
			"export default { onAdd(o: Obj): void { globalThis.out = name(o) ? Mode.A : 'no' } }\n"},
		{"typescript cjs", "c.cts", "module.exports = { onAdd: (o: unknown): void => { (globalThis as any).out = 'ran' } }"},
		{"hashbang", "d.js", "#!/usr/bin/env node\nexport default { onAdd() { globalThis.out = 'ran' } }"},
		{"class instance", "e.js", `class H { onAdd() { globalThis.out = this.word() } word() { return "ran" } }
			module.exports = new H()`},
		{"async generator lowered", "f.js", `async function* g() { yield "ran" }
			export default { async onAdd() { for await (const x of g()) globalThis.out = x } }`},
		{"modern syntax", "g.js", `export default { onAdd(o) {
			const {metadata: {name, ...rest}} = o; let y = o?.spec?.missing ?? "ran"; y ||= "no";
			class C { #p = y; static s = 1; get p() { return this.#p } }
			globalThis.out = new C().p } }`},
		{"this is the definition", "h.js", `export default { word: undefined, onAdd() { globalThis.out = this.helper() }, helper: undefined }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := tt.src
			if tt.name == "this is the definition" {
				src = `const d = { onAdd() { globalThis.out = this === d ? "ran" : "no" } }; export default d`
			}
			s := newTestScript(t, tt.file, src, Options{})
			if err := s.OnAdd(sample(), Event{}); err != nil {
				t.Fatalf("OnAdd: %v", err)
			}
			if got := outJSON(t, s); got != `"ran"` {
				t.Errorf("out = %s, want \"ran\"", got)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, src string
		line, col       int
		msg             string
	}{
		{"js syntax", "bad.js", "export default {\n  onAdd(obj {\n  }\n}\n", 2, 13, `Expected ")" but found "{"`},
		{"ts syntax after types", "bad.ts", "type A = { a: string }\ninterface B { b: A }\n\nexport default {\n  onAdd(o: B) { let x: = 1 }\n}\n",
			5, 24, `Unexpected "="`},
		{"unterminated string", "s.js", "module.exports = {\n  onAdd() { return 'x }\n}\n", 2, 24, "Unterminated string literal"},
		{"rejected by goja only", "re.js", "const ok = 1;\nconst r = /(?<a>x)/d;\nexport default { onAdd() {} }\n", 2, 11, "Invalid flags"},
		{"strict mode in ESM", "w.js", "with (Math) {}\nexport default {}\n", 1, 1, "With statements cannot be used"},
		{"top-level await", "t.js", "await 1\nmodule.exports = {}\n", 1, 1, "await"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tt.file, []byte(tt.src))
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Compile error = %v (%T), want *ScriptError", err, err)
			}
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("error does not wrap ErrSyntax: %v", err)
			}
			if se.File != tt.file || se.Line != tt.line || se.Column != tt.col {
				t.Errorf("position = %s:%d:%d, want %s:%d:%d (%v)", se.File, se.Line, se.Column, tt.file, tt.line, tt.col, err)
			}
			if !strings.Contains(se.Message, tt.msg) {
				t.Errorf("message = %q, want it to contain %q", se.Message, tt.msg)
			}
		})
	}
}

func TestScriptErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  ScriptError
		want string
	}{
		{ScriptError{File: "a.js", Line: 3, Column: 7, Message: "boom"}, "a.js:3:7: boom"},
		{ScriptError{File: "a.js", Line: 3, Message: "boom"}, "a.js:3: boom"},
		{ScriptError{File: "a.js", Message: "boom"}, "a.js: boom"},
		{ScriptError{Message: "boom"}, "boom"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestRuntimeErrorPositions(t *testing.T) {
	t.Parallel()
	src := "// types shift nothing after transform, but lines must still match\n" +
		"type Obj = { metadata: { name: string } };\n" +
		"function check(o: Obj): void {\n" +
		"  if (o.metadata.name === 'web') {\n" +
		"    throw new Error(`bad name ${o.metadata.name}`);\n" +
		"  }\n" +
		"}\n" +
		"export default {\n" +
		"  onAdd(o: Obj) {\n" +
		"    check(o);\n" +
		"  },\n" +
		"};\n"
	s := newTestScript(t, "pos.ts", src, Options{})
	err := s.OnAdd(sample(), Event{})
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("OnAdd error = %v, want *ScriptError", err)
	}
	if got, want := se.Error(), "pos.ts:5:11: Error: bad name web"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	if want := "at check (pos.ts:5:11)\nat onAdd (pos.ts:10:5)"; se.Stack != want {
		t.Errorf("stack = %q, want %q", se.Stack, want)
	}
	if se.Err != nil {
		t.Errorf("a JS throw has no Go cause, got %v", se.Err)
	}
}

func TestProgramInstantiatedConcurrently(t *testing.T) {
	t.Parallel()
	p, err := Compile("c.js", []byte(`let n = 0; export default { onAdd(o) { n++; globalThis.out = o.metadata.name + n } }`))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			s, err := p.Instantiate(Options{})
			if err == nil {
				for range 50 {
					if err = s.OnAdd(sample(), Event{}); err != nil {
						break
					}
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
