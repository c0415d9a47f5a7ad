package scripting_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/jsinformer/jsinformer/scripting"
)

const staticHead = "export default { onAdd(o) { run(o); } };\n"

func TestStaticCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []scripting.StaticCall
	}{
		{"literal", `function run() { k8s.get("v1/pods", "ns", "x"); }`,
			[]scripting.StaticCall{{Method: "get", Resources: []string{"v1/pods"}, Namespaces: []string{"ns"}, Names: []string{"x"}, Line: 2}}},
		{"const and template", "const G = \"apps\";\nconst D = `${G}/v1/deployments`;\nfunction run(o) { k8s.patch(D, o.metadata.namespace, \"x\", {}); }",
			[]scripting.StaticCall{{Method: "patch", Resources: []string{"apps/v1/deployments"}, Names: []string{"x"}, Line: 4}}},
		{"for-of over a const array and a helper's parameter",
			"const RES = [\"v1/configmaps\", \"batch/v1/jobs\"];\nfunction run(o) { for (const r of RES) del(r, o); }\nfunction del(res, o) { k8s.delete(res, \"\", \"x\"); }",
			[]scripting.StaticCall{{Method: "delete", Resources: []string{"batch/v1/jobs", "v1/configmaps"}, Namespaces: []string{""}, Names: []string{"x"}, Line: 4}}},
		{"a parameter passed on under its own name (07-ttl-cleanup)",
			"const RES = [\"v1/configmaps\", \"batch/v1/jobs\"];\nfunction run(o) { for (const resource of RES) del(resource, o); }\nfunction del(resource, o) { k8s.delete(resource, \"\", \"x\"); }",
			[]scripting.StaticCall{{Method: "delete", Resources: []string{"batch/v1/jobs", "v1/configmaps"}, Namespaces: []string{""}, Names: []string{"x"}, Line: 4}}},
		{"a name concatenated with itself is unknown",
			"let r = \"v1/pods\";\nfunction run(o) { r = r + \"x\"; k8s.get(r, \"\", \"x\"); }",
			[]scripting.StaticCall{{Method: "get", Namespaces: []string{""}, Names: []string{"x"}, Line: 3}}},
		{"a parameter of a function passed around is unknown",
			"function run(o) { [1].forEach(() => del(\"v1/pods\")); }\nfunction del(res) { k8s.delete(res, \"\", \"x\"); }\nconst f = del;",
			[]scripting.StaticCall{{Method: "delete", Namespaces: []string{""}, Names: []string{"x"}, Line: 3}}},
		{"resource from the object is unknown", `function run(o) { k8s.get(o.kind, "", "x"); }`,
			[]scripting.StaticCall{{Method: "get", Namespaces: []string{""}, Names: []string{"x"}, Line: 2}}},
		{"a pushed-to array is unknown",
			"const RES = [\"v1/pods\"];\nRES.push(globalThis.x);\nfunction run() { for (const r of RES) k8s.list(r); }",
			[]scripting.StaticCall{{Method: "list", Namespaces: []string{""}, Line: 4}}},
		{"apply and list namespace", "function run(o) {\n k8s.patch(\"v1/secrets\", \"a\", \"s\", {}, { type: \"apply\" });\n k8s.list(\"v1/secrets\", { namespace: \"b\" });\n}",
			[]scripting.StaticCall{
				{Method: "patch", Resources: []string{"v1/secrets"}, Namespaces: []string{"a"}, Names: []string{"s"}, Apply: true, Line: 3},
				{Method: "list", Resources: []string{"v1/secrets"}, Namespaces: []string{"b"}, Line: 4}}},
		{"conditional", `function run(o) { k8s.create(o.x ? "v1/pods" : "v1/secrets", {}); }`,
			[]scripting.StaticCall{{Method: "create", Resources: []string{"v1/pods", "v1/secrets"}, Line: 2}}},
		{"event", `function run(o) { k8s.event(o, "Normal", "R", "m"); }`,
			[]scripting.StaticCall{{Method: "event", Resources: []string{"v1/events"}, Line: 2}}},
		{"an alias of k8s", "const c = k8s;\nfunction run() { c.get(\"v1/pods\", \"\", \"x\"); }",
			[]scripting.StaticCall{{Line: 2}}},
		{"names: constants, a union, unknown",
			"const N = \"slack\";\nfunction run(o) {\n k8s.get(\"v1/secrets\", \"ops\", N);\n k8s.get(\"v1/secrets\", \"ops\", o.x ? \"a\" : \"b\");\n k8s.get(\"v1/secrets\", \"ops\", o.metadata.name);\n k8s.list(\"v1/secrets\");\n}",
			[]scripting.StaticCall{
				{Method: "get", Resources: []string{"v1/secrets"}, Namespaces: []string{"ops"}, Names: []string{"slack"}, Line: 4},
				{Method: "get", Resources: []string{"v1/secrets"}, Namespaces: []string{"ops"}, Names: []string{"a", "b"}, Line: 5},
				{Method: "get", Resources: []string{"v1/secrets"}, Namespaces: []string{"ops"}, Line: 6},
				{Method: "list", Resources: []string{"v1/secrets"}, Namespaces: []string{""}, Line: 7}}},
		{"reassigned name is the union", "let r = \"v1/pods\";\nfunction run(o) { if (o.x) r = \"v1/secrets\"; k8s.get(r, \"\", \"x\"); }",
			[]scripting.StaticCall{{Method: "get", Resources: []string{"v1/pods", "v1/secrets"}, Namespaces: []string{""}, Names: []string{"x"}, Line: 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prg, err := scripting.Compile("s.js", []byte(staticHead+tt.src))
			if err != nil {
				t.Fatal(err)
			}
			got := prg.Calls()
			for i := range tt.want {
				tt.want[i].File = "s.js"
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("calls\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestStaticCallsInModules finds calls in a module a plugin imports, positioned in it.
func TestStaticCallsInModules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/k.js", "export const CM = \"v1/configmaps\";\n\nexport function drop(ns, n) {\n  k8s.delete(CM, ns, n);\n}\n")
	src := "import { drop } from \"./lib/k.js\";\nexport default { onAdd(o) { drop(o.metadata.namespace, \"x\"); } };\n"
	write("p.js", src)
	prg, err := scripting.CompileIn(dir, "p.js", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []scripting.StaticCall{{Method: "delete", Resources: []string{"v1/configmaps"}, Names: []string{"x"}, File: "lib/k.js", Line: 4}}
	if got := prg.Calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls\n got %+v\nwant %+v", got, want)
	}
}

// TestReadsCache: every spelling of ctx.cache whose key is in the source counts; a script
// that never names it does not.
func TestReadsCache(t *testing.T) {
	t.Parallel()
	const head = "export default { watch: \"v1/pods\", validate(obj, ctx) { return check(obj, ctx); } };\n"
	for _, tt := range []struct {
		name, src string
		want      bool
	}{
		{"no cache", "function check(obj) { return obj.metadata.name !== \"x\" || \"no x\"; }", false},
		{"a word in a comment or another string", "// the cache lags\nfunction check(obj) { return \"caches\" !== obj.kind; }", false},
		{"ctx.cache", "function check(obj, ctx) { return !ctx.cache.get(\"a\", \"b\"); }", true},
		{"optional chain", "function check(obj, ctx) { return !ctx?.cache?.get(\"a\", \"b\"); }", true},
		{"destructured", "function check(obj, { cache }) { return !cache.get(\"a\", \"b\"); }", true},
		{"destructured and renamed", "function check(obj, ctx) { const { cache: c } = ctx; return !c.get(\"a\", \"b\"); }", true},
		{"bracket with a constant", "const K = \"cache\";\nfunction check(obj, ctx) { return !ctx[K].get(\"a\", \"b\"); }", true},
		{"bracket with a template", "function check(obj, ctx) { return !ctx[`cache`].get(\"a\", \"b\"); }", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prg, err := scripting.Compile("s.js", []byte(head+tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := prg.ReadsCache(); got != tt.want {
				t.Errorf("ReadsCache() = %v, want %v", got, tt.want)
			}
		})
	}
}
