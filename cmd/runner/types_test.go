package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/openapi"
	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/internal/tsc"
	"github.com/jsinformer/jsinformer/jstest"
	"github.com/jsinformer/jsinformer/scripting"
)

var updateExamples = flag.Bool("update-examples", false,
	"write the declarations `runner types` generates into examples/scripts instead of comparing")

var examplesDir = filepath.Join("..", "..", "examples", "scripts")

func TestTypesWithoutACluster(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "folder")
	out, err := execute(t, t.Context(), "types", "-o", dir, "--kubeconfig", "/nonexistent")
	if err != nil {
		t.Fatalf("runner types: %v\n%s", err, out)
	}
	if want := "wrote " + filepath.Join(dir, "jsinformer.d.ts") + "\nwrote " + filepath.Join(dir, "jsinformer-test.d.ts") + "\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	for name, want := range map[string][]byte{"jsinformer.d.ts": scripting.Declarations(), "jsinformer-test.d.ts": jstest.Declarations()} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not the runner's declarations (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "resources.d.ts")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("resources.d.ts written without --gvr (%v)", err)
	}
}

func TestTypesErrors(t *testing.T) {
	cp := controlplane.Require(t, env)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown resource", []string{"--kubeconfig", cp.Kubeconfig, "--gvr", "deploymnets"}, "did you mean apps/v1/deployments"},
		{"unreachable cluster", []string{"--kubeconfig", kubeconfigWith(t, "https://127.0.0.1:1", "x"), "--gvr", "deploy"}, "connect to cluster https://127.0.0.1:1"},
		{"a stray argument", []string{"deploy"}, `unknown command "deploy"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			_, err := execute(t, t.Context(), append([]string{"types", "-o", dir}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to say %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("a failed run wrote %d files (%s...): want all or none", len(entries), entries[0].Name())
			}
		})
	}
}

// TestTypeScriptExamplesTypeCheck writes the declarations with `runner types` against the
// control plane (the widgets CRD installed), keeps examples/scripts' copies of them current,
// and runs the pinned tsc over the TypeScript examples, plugins and test files, with
// testdata/typed (every test declaration used), and over files that must not compile.
func TestTypeScriptExamplesTypeCheck(t *testing.T) {
	cp := controlplane.Require(t, env)
	applyWidgetCRD(t, dynamic.NewForConfigOrDie(cp.Config), discovery.NewDiscoveryClientForConfigOrDie(cp.Config))
	compiler := tsc.Install(t)

	// The examples' copies: exactly what `runner types --gvr widgets.example.com` writes.
	gen := t.TempDir()
	runTypes(t, gen, "--kubeconfig", cp.Kubeconfig, "--gvr", "widgets.example.com")
	for _, name := range []string{"jsinformer.d.ts", "jsinformer-test.d.ts", "resources.d.ts"} {
		checkExampleCopy(t, gen, name)
	}

	good := t.TempDir()
	copyExamples(t, good, "*.ts", "tsconfig.json")
	runTypes(t, good, "--kubeconfig", cp.Kubeconfig, "--gvr", "widgets.example.com", "--gvr", "deploy")
	writeFile(t, filepath.Join(good, "typed-deployments.ts"), typedDeployments)
	copyFiles(t, typedDir, good, "*.ts")
	writeDocBlocks(t, good, filepath.Join("..", "..", "docs", "testing.md"))
	if out, err := tsc.Check(t, compiler, good); err != nil {
		t.Fatalf("tsc over the TypeScript examples: %v\n%s", err, out)
	}

	bad := t.TempDir()
	copyExamples(t, bad, "tsconfig.json")
	runTypes(t, bad, "--kubeconfig", cp.Kubeconfig, "--gvr", "widgets.example.com")
	for name, src := range mistakes {
		writeFile(t, filepath.Join(bad, name), src.code)
	}
	out, err := tsc.Check(t, compiler, bad)
	if err == nil {
		t.Fatalf("tsc accepted scripts with mistakes:\n%s", out)
	}
	for name, src := range mistakes {
		if !strings.HasSuffix(name, ".ts") {
			t.Fatalf("mistake %s: tsc checks .ts files only", name)
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\(\d+,\d+\): error TS\d+: ` + src.error).MatchString(out) {
			t.Errorf("tsc did not report %s's mistake (%s):\n%s", name, src.error, out)
		}
	}
}

// typedDeployments uses the generated Deployment the way scripts do.
const typedDeployments = `import type { Deployment } from "./resources";

export default defineScript<Deployment>({
  watch: "apps/v1/deployments",
  onUpdate(oldD, d, ctx) {
    const replicas: number | undefined = d.spec.replicas;
    const images: string[] = d.spec.template.spec?.containers.map((c) => c.image ?? "") ?? [];
    const copy = util.clone(d);
    copy.spec.replicas = (replicas ?? 1) + 1;
    const owner = ctx.cache.get<Deployment>(d.metadata.namespace, d.metadata.name);
    const changes = util.diff(oldD, d).map((c) => c.path);
    k8s.patch("apps/v1/deployments", d.metadata.namespace, d.metadata.name, { spec: { replicas: copy.spec.replicas } }, { type: "merge" });
    log.info("scaled", { images, owner: owner?.metadata.name, changes });
  },
  reconcile(key) {
    return { requeueAfter: key.length > 3 ? "30s" : 1000 };
  },
});
`

// mistakes are scripts tsc must reject, with the message it must give.
var mistakes = map[string]struct{ code, error string }{
	"misspelt-key.ts": {`export default defineScript({ onadd() {} });`,
		`Object literal may only specify known properties, .*'onadd'`},
	"writes-a-view.ts": {"import type { Widget } from \"./resources\";\n" +
		"export default defineScript<Widget>({ onAdd(w) { w.metadata.name = \"x\"; } });",
		`Cannot assign to 'name' because it is a read-only property`},
	"wrong-field-type.ts": {"import type { Widget } from \"./resources\";\n" +
		"export default defineScript<Widget>({ onAdd(w) { const c: number = w.spec?.color ?? 0; log.info(String(c)); } });",
		`Type 'string \| 0' is not assignable to type 'number'`},
	"wrong-k8s-call.ts": {`export default defineScript({ onAdd(o) { k8s.patch("apps/v1/deployments", "ns"); } });`,
		`Expected 4-5 arguments, but got 2`},
	"delete-reads-obj.ts": {`export default defineScript({ admission: { operations: ["DELETE"] }, validate(obj) { if (!obj.metadata.labels) return; } });`,
		`'obj' is possibly 'null'`},
	"bad-watch.ts": {`export default defineScript({ watch: { resource: "deploy", namespaces: "x" }, onAdd() {} });`,
		`Object literal may only specify known properties, .*'namespaces'`},

	// Test files, checked with jsinformer-test.d.ts.
	"misspelt-matcher.test.ts": {`test("t", () => { expect(1).toEquals(1); });`,
		`Property 'toEquals' does not exist on type 'Expectation'. Did you mean 'toEqual'\?`},
	"negated-twice.test.ts": {`test("t", () => { expect(1).not.not.toBe(1); });`,
		`Property 'not' does not exist on type 'Matchers'`},
	"matcher-argument.test.ts": {`test("t", () => { expect([1]).toHaveLength("1"); });`,
		`Argument of type 'string' is not assignable to parameter of type 'number'`},
	"no-such-harness-method.test.ts": {`test("t", () => { harness("./p.ts").create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }); });`,
		`Property 'create' does not exist on type 'Harness'`},
	"harness-argument.test.ts": {`test("t", () => { harness("./p.ts").advance(true); });`,
		`Argument of type 'boolean' is not assignable to parameter of type 'HarnessDuration'`},
	"missing-argument.test.ts": {`test("t", () => { harness("./p.ts").get("v1/configmaps", "x"); });`,
		`Expected 3 arguments, but got 2`},
	"object-without-kind.test.ts": {`test("t", () => { harness("./p.ts").update({ apiVersion: "v1", metadata: { name: "x" } }); });`,
		`Argument of type '.*' is not assignable to parameter of type 'HarnessObject'`},
	"misspelt-flag.test.ts": {`test("t", () => { harness("./p.ts", { flags: { namespaces: "x" } }); });`,
		`Object literal may only specify known properties, but 'namespaces' does not exist in type 'HarnessFlags'`},
	"allow-net-type.test.ts": {`test("t", () => { harness("./p.ts", { flags: { allowNet: 443 } }); });`,
		`Type 'number' is not assignable to type 'string \| string\[\] \| undefined'`},
	"writes-the-writes.test.ts": {`test("t", () => { const h = harness("./p.ts"); h.writes = []; });`,
		`Cannot assign to 'writes' because it is a read-only property`},
	"no-such-verb.test.ts": {`test("t", () => { expect(harness("./p.ts").writes.filter((w) => w.verb === "apply")).toHaveLength(0); });`,
		`This comparison appears to be unintentional because the types '"create" \| .*' and '"apply"' have no overlap`},
	"done-callback.test.ts": {`test("t", (done: () => void) => { done(); });`,
		`Argument of type '\(done: \(\) => void\) => void' is not assignable to parameter of type 'TestBody'`},
}

// typedDir holds a test file that uses every declaration of jsinformer-test.d.ts, and the
// plugin and fixtures it runs with.
var typedDir = filepath.Join("testdata", "typed")

// TestTypedTestFilePasses runs testdata/typed's test file: the uses of the declarations that
// tsc accepts in TestTypeScriptExamplesTypeCheck also work.
func TestTypedTestFilePasses(t *testing.T) {
	t.Parallel()
	out, err := execute(t, t.Context(), "test", filepath.Join(typedDir, "typed-harness.test.ts"))
	if err != nil || !strings.Contains(out, "\n4 passed, 0 failed, 2 skipped\n") {
		t.Fatalf("runner test testdata/typed: %v\n%s", err, out)
	}
}

// writeDocBlocks writes each ```ts block of the document into dir as a test file.
func writeDocBlocks(t *testing.T, dir, doc string) {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```ts\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	if len(blocks) == 0 {
		t.Fatalf("%s has no ```ts block", doc)
	}
	for i, b := range blocks {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("doc-%d.test.ts", i+1)), b[1])
	}
}

func runTypes(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := execute(t, t.Context(), append([]string{"types", "-o", dir}, args...)...); err != nil {
		t.Fatalf("runner types: %v\n%s", err, out)
	}
}

// checkExampleCopy compares examples/scripts/name with the generated one, or updates it.
func checkExampleCopy(t *testing.T, gen, name string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(gen, name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(examplesDir, name)
	if *updateExamples {
		writeFile(t, path, string(want))
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Errorf("examples/scripts/%s differs from what `runner types` writes (%v): "+
			"go test ./cmd/runner -run TestTypeScriptExamplesTypeCheck -update-examples", name, err)
	}
}

func copyExamples(t *testing.T, dir string, patterns ...string) {
	t.Helper()
	copyFiles(t, examplesDir, dir, patterns...)
}

// copyFiles copies the files of from that match patterns into dir, but for declaration files.
func copyFiles(t *testing.T, from, dir string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		matches, err := filepath.Glob(filepath.Join(from, p))
		if err != nil || len(matches) == 0 {
			t.Fatalf("no file of %s matches %s (%v)", from, p, err)
		}
		for _, m := range matches {
			if strings.HasSuffix(m, ".d.ts") {
				continue // written by runner types
			}
			data, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, filepath.Base(m)), string(data))
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// applyWidgetCRD creates examples/crds/widgets.yaml and waits until widgets are served and
// their schema published.
func applyWidgetCRD(t *testing.T, dyn dynamic.Interface, disc discovery.DiscoveryInterface) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "crds", "widgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		t.Fatal(err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create the widgets CRD: %v", err)
	}
	// Served, then published in /openapi/v3 a moment later.
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dyn.Resource(widgets).List(t.Context(), metav1.ListOptions{Limit: 1})
		if err == nil {
			var paths map[string]openapi.GroupVersion
			if paths, err = disc.OpenAPIV3().Paths(); err == nil && paths["apis/example.com/v1"] == nil {
				err = errors.New("not in /openapi/v3 yet")
			}
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("widgets not served: %w", err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
