package jstest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/jstest"
)

// runFile writes files into a folder and runs the one named by the first key ending in
// .test.js or .test.ts.
func runFile(t *testing.T, testFile string, files map[string]string) jstest.FileResult {
	t.Helper()
	return runFileWith(t, jstest.Options{Timeout: 10 * time.Second}, testFile, files)
}

func runFileWith(t *testing.T, opts jstest.Options, testFile string, files map[string]string) jstest.FileResult {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return jstest.RunFile(t.Context(), filepath.Join(dir, testFile), opts)
}

func only(t *testing.T, src string) jstest.TestResult {
	t.Helper()
	res := runFile(t, "x.test.js", map[string]string{"x.test.js": src})
	if res.Error != "" || len(res.Tests) != 1 {
		t.Fatalf("file result %+v", res)
	}
	return res.Tests[0]
}

// Each matcher passes where it should and fails, at the assertion's position, where it
// should not; .not inverts it.
func TestMatchers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		pass bool
		msg  string // in the failure message
	}{
		{`expect(1).toBe(1)`, true, ""},
		{`expect({}).toBe({})`, false, "use toEqual"},
		{`expect(NaN).toBe(NaN)`, true, ""},
		{`expect({ a: [1, { b: 2 }], c: undefined }).toEqual({ a: [1, { b: 2 }] })`, true, ""},
		{`expect({ a: 1 }).toEqual({ a: 2 })`, false, "-   a: 2,\n+   a: 1,"},
		{`expect([1, 2]).toEqual([1, 2, 3])`, false, "-   3,"},
		{`expect(1).toEqual(2)`, false, "Expected: 2\nReceived: 1"},
		{`expect({ a: 1, b: { c: 2, d: 3 } }).toMatchObject({ b: { c: 2 } })`, true, ""},
		{`expect({ a: 1, b: { c: 2 } }).toMatchObject({ b: { c: 3 } })`, false, "-     c: 3,"},
		{`expect([1, 2, 3]).toHaveLength(3)`, true, ""},
		{`expect("abc").toHaveLength(2)`, false, "Received length: 3"},
		{`expect([1, 2]).toContain(2)`, true, ""},
		{`expect("hello").toContain("ell")`, true, ""},
		{`expect([1, 2]).toContain(5)`, false, "Expected to contain: 5"},
		{`expect(() => { throw new Error("boom 42"); }).toThrow()`, true, ""},
		{`expect(() => { throw new Error("boom 42"); }).toThrow("boom")`, true, ""},
		{`expect(() => { throw new Error("boom 42"); }).toThrow(/\d+/)`, true, ""},
		{`expect(() => { throw new TypeError("x"); }).toThrow(TypeError)`, true, ""},
		{`expect(() => {}).toThrow()`, false, "did not throw"},
		{`expect(() => { throw new Error("a"); }).toThrow("b")`, false, "Thrown: Error: a"},
		{`expect(1).not.toBe(2)`, true, ""},
		{`expect([1]).not.toEqual([1])`, false, "Expected: not [\n  1,\n]"},
		{`expect(() => {}).not.toThrow()`, true, ""},
		{`expect(null).toBeNull()`, true, ""},
		{`expect(undefined).toBeDefined()`, false, "Received: undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			r := only(t, "test(\"m\", () => {\n  "+tt.expr+";\n});")
			if (r.Status == jstest.Passed) != tt.pass {
				t.Fatalf("status %s, want pass=%v: %+v", r.Status, tt.pass, r.Failure)
			}
			if tt.pass {
				return
			}
			if !strings.Contains(r.Failure.Message, tt.msg) || r.Failure.Line != 2 || r.Failure.Column < 3 {
				t.Fatalf("failure %q at %d:%d, want %q at line 2", r.Failure.Message, r.Failure.Line, r.Failure.Column, tt.msg)
			}
		})
	}
}

// A TypeScript test file's failure points into the .ts source, not the transformed code.
func TestTypeScriptPositions(t *testing.T) {
	t.Parallel()
	res := runFile(t, "x.test.ts", map[string]string{"x.test.ts": `interface A { n: number }
const a: A = { n: 1 };

test("ts", () => {
  const n: number = a.n;
  expect(n).toBe(2);
});`})
	if len(res.Tests) != 1 || res.Tests[0].Failure == nil {
		t.Fatalf("result %+v", res)
	}
	if f := res.Tests[0].Failure; f.Line != 6 || f.Column != 13 || !strings.HasSuffix(f.File, "x.test.ts") {
		t.Fatalf("failure at %s:%d:%d, want x.test.ts:6:13", f.File, f.Line, f.Column)
	}
}

func TestHooksDescribeAndOrder(t *testing.T) {
	t.Parallel()
	res := runFile(t, "x.test.js", map[string]string{"x.test.js": `
const seen = [];
beforeEach(() => seen.push("outer before"));
afterEach(() => seen.push("outer after"));
describe("group", () => {
  beforeEach(() => seen.push("inner before"));
  test("one", () => seen.push("one"));
});
test("two", () => {
  expect(seen).toEqual(["outer before", "inner before", "one", "outer after", "outer before"]);
});
test.skip("three", () => { throw new Error("skipped tests do not run"); });
test("async", async () => { await Promise.resolve(); expect(1).toBe(1); });
test("rejected", async () => { throw new Error("no"); });
`})
	var got []string
	for _, tr := range res.Tests {
		got = append(got, tr.Name+"="+tr.Status)
	}
	want := "group > one=passed two=passed three=skipped async=passed rejected=failed"
	if strings.Join(got, " ") != want {
		t.Fatalf("results %v, want %s (%+v)", got, want, res)
	}
}

func TestFileErrors(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"test(\"a\", () => {\n  let x = ;\n});": "x.test.js:2:",
		"throw new Error(\"top\");":             "Error: top",
		`require("./helpers");`:                 "cannot import \"./helpers\"",
	} {
		res := runFile(t, "x.test.js", map[string]string{"x.test.js": src})
		if !strings.Contains(res.Error, want) || len(res.Tests) != 0 {
			t.Errorf("%q: file error %q, want it to contain %q", src, res.Error, want)
		}
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.test.js")
	if err := os.WriteFile(path, []byte(`test("loops", () => { for (;;) {} });`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := jstest.RunFile(t.Context(), path, jstest.Options{Timeout: 200 * time.Millisecond})
	if f := res.Tests[0].Failure; f == nil || !strings.Contains(f.Message, "timed out after 200ms") {
		t.Fatalf("result %+v", res.Tests[0])
	}
}
