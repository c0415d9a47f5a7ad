package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `runner check`: in-process, no control plane (these run with -short too).

// examplePolicies are the admission scripts of examples/scripts, as --only flags: the folder
// also holds handler plugins, one of which imports an npm package this test does not install.
var examplePolicies = []string{"--only", "21-require-team-label.js", "--only", "22-default-security-context.js",
	"--only", "23-unique-ingress-hosts.js", "--only", "24-audit-latest-images.js"}

// runCheckExample runs runner check with the example policies over args, stdin reading stdin.
func runCheckExample(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := newCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(stdin))
	full := append([]string{"check", "--scripts", filepath.Join("..", "..", "examples", "scripts")}, examplePolicies...)
	cmd.SetArgs(append(full, args...))
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

// TestCheckExampleManifests runs runner check over examples/manifests, as docs/check.md
// shows it: web passes, worker is denied by 21 (after 22 patched it), legacy is warned,
// patched and audited, and the second Ingress for a host is denied by 23's index of the
// first; the exit code is 1.
func TestCheckExampleManifests(t *testing.T) {
	t.Parallel()
	manifests := filepath.Join("..", "..", "examples", "manifests")
	out, err := runCheckExample(t, "", manifests)
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1:\n%s", code, err, out)
	}
	deployments := filepath.Join(manifests, "deployments.yaml")
	ingresses := filepath.Join(manifests, "network", "ingresses.yaml")
	patch := `[{"op":"add","path":"/spec/template/spec/containers/0/securityContext","value":{"allowPrivilegeEscalation":false}},` +
		`{"op":"add","path":"/spec/template/spec/securityContext","value":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}}}]`
	want := []string{
		"MUTATE  Deployment prod/worker (" + deployments + ", document 2): 22-default-security-context.js: " + patch,
		"DENY    Deployment prod/worker (" + deployments + ", document 2): 21-require-team-label.js: deployment worker needs a \"team\" label: who is on call for it?",
		"MUTATE  Deployment prod/legacy (" + deployments + ", document 3): 22-default-security-context.js: " + patch,
		"WARN    Deployment prod/legacy (" + deployments + ", document 3): 21-require-team-label.js: deployment legacy has team \"unassigned\": claim it",
		"AUDIT   Deployment prod/legacy (" + deployments + ", document 3): 24-audit-latest-images.js: unpinned images: busybox; use a version tag or a digest",
		"DENY    Ingress default/shop-canary (" + ingresses + ", document 2): 23-unique-ingress-hosts.js: host already in use: shop.example.invalid (claimed by default/shop)",
		"checked 7 objects from 4 files with 4 admission scripts (mode enforce): 2 denied, 1 warned, 2 mutated, 1 audited, 0 errors",
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("output:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	checkDocShowsOutput(t, out, manifests)
}

// checkDocShowsOutput fails unless every line docs/check.md shows of this run (the first
// text block, "[...]" abbreviating a patch) is a line of out, its paths written from the
// repository's root.
func checkDocShowsOutput(t *testing.T, out, manifests string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "check.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "```text\n")
	block, _, _ = strings.Cut(block, "```")
	out = strings.ReplaceAll(out, manifests+string(filepath.Separator), "examples/manifests/")
	out = strings.ReplaceAll(out, string(filepath.Separator), "/")
	shown := 0
	for _, line := range strings.Split(block, "\n") {
		if line == "" || strings.HasPrefix(line, "$") || strings.HasPrefix(line, " ") || line == "1" {
			continue
		}
		shown++
		if prefix, abbreviated := strings.CutSuffix(line, "[...]"); abbreviated {
			line = prefix
		} else {
			line += "\n"
		}
		if !strings.Contains(out, line) {
			t.Errorf("docs/check.md shows %q, not in the output:\n%s", line, out)
		}
	}
	if shown != 7 {
		t.Errorf("docs/check.md shows %d lines of the example's output, want 7", shown)
	}
}

// TestCheckStdinJSON: `kustomize build | runner check --scripts policies - -o json`: the
// documents of stdin, reported as JSON; --mode warn exits 0 on a denial.
func TestCheckStdinJSON(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "manifests", "deployments.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCheckExample(t, string(data), "-o", "json", "--mode", "warn", "-")
	if err != nil {
		t.Fatalf("exit %d (%v), want 0:\n%s", exitCode(err), err, out)
	}
	var doc struct {
		Mode    string
		Objects []struct {
			File, Name string
			Document   int
			Admitted   bool
		}
		Summary  struct{ Denied, Warned, Mutated, Audited int }
		ExitCode int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Mode != "warn" || len(doc.Objects) != 3 || doc.Objects[1].File != "stdin" || doc.Objects[1].Document != 2 || doc.Objects[1].Admitted ||
		doc.Summary.Denied != 1 || doc.Summary.Warned != 1 || doc.Summary.Mutated != 2 || doc.Summary.Audited != 1 || doc.ExitCode != 0 {
		t.Fatalf("report %+v", doc)
	}
}

// TestCheckJUnit: -o junit is XML a CI reads; a denial is a failure.
func TestCheckJUnit(t *testing.T) {
	t.Parallel()
	out, err := runCheckExample(t, "", "-o", "junit", filepath.Join("..", "..", "examples", "manifests"))
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1:\n%s", code, err, out)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	// A case per webhook called: the namespace 1 (none matches), web, worker and legacy 3 each
	// (22's mutate, 21's and 24's validate: every validating webhook is called, even after a
	// denial), each Ingress 1 (23), the Service 1 (none).
	if doc.Tests != 13 || doc.Failures != 2 || doc.Errors != 0 || len(doc.Suites) != 4 {
		t.Fatalf("junit: tests %d failures %d errors %d suites %+v\n%s", doc.Tests, doc.Failures, doc.Errors, doc.Suites, out)
	}
}

// TestCheckBadInvocations: mistakes on the command line and unreadable input exit 2 with an
// error naming them; a document that is not a manifest is reported with its file and index.
func TestCheckBadInvocations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nmetadata: {name: b}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	scripts := filepath.Join("..", "..", "examples", "scripts")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --scripts", []string{"check", bad}, "--scripts is required"},
		{"no manifests", []string{"check", "--scripts", scripts}, "no manifests: give files, folders or - for stdin"},
		{"bad output", []string{"check", "--scripts", scripts, "-o", "xml", bad}, `-o/--output must be text, json or junit, not "xml"`},
		{"bad mode", []string{"check", "--scripts", scripts, "--mode", "dry", bad}, `--mode must be enforce, warn or audit, not "dry"`},
		{"missing scripts folder", []string{"check", "--scripts", filepath.Join(dir, "nope"), bad}, "the folder does not exist"},
		{"missing manifest", []string{"check", "--scripts", scripts, filepath.Join(dir, "nope.yaml")}, "nope.yaml: no such file or directory"},
		{"a document without apiVersion and kind", append(append([]string{"check", "--scripts", scripts}, examplePolicies...), bad),
			"ERROR   " + bad + ", document 2: not a manifest: no apiVersion and no kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := execute(t, t.Context(), tt.args...)
			if code := exitCode(err); code != 2 || !strings.Contains(out+errString(err), tt.want) {
				t.Fatalf("exit %d (%v), want 2 and %q:\n%s", code, err, tt.want, out)
			}
		})
	}
}

// TestCheckHelp: runner --help lists check; check --help explains its flags with examples.
func TestCheckHelp(t *testing.T) {
	t.Parallel()
	root, err := execute(t, t.Context(), "--help")
	if err != nil || !strings.Contains(root, "check       Run the scripts' validate and mutate over manifests") {
		t.Errorf("runner --help (%v) does not list check:\n%s", err, root)
	}
	out, err := execute(t, t.Context(), "check", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"check --scripts DIR FILE_OR_DIR...", "--scripts", "--output", "--mode", "--only", "--gvr", "Examples:",
		"kustomize build overlays/prod | runner check --scripts policies -", "Exits 1 when a script denies, 2 on an input or script error"} {
		if !strings.Contains(out, want) {
			t.Errorf("check --help lacks %q:\n%s", want, out)
		}
	}
}

// TestCheckSelectsNamespacesByTheInputsLabels: `runner check` over a folder with example 26,
// whose namespaceSelector opts namespaces in by label: a Deployment without a memory limit is
// denied in the namespace the folder labels, passes where it is not labelled (the script is
// not called) and in the namespace it excludes by name.
func TestCheckSelectsNamespacesByTheInputsLabels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifests := map[string]string{
		"00-namespaces.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {policy.example.com/memory-limits: required}\n" +
			"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: sandbox\n  labels: {policy.example.com/memory-limits: required}\n",
		"apps/deployments.yaml": deploymentDoc("shop") + "---\n" + deploymentDoc("dev") + "---\n" + deploymentDoc("sandbox"),
	}
	for name, content := range manifests {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := newCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"check", "--scripts", filepath.Join("..", "..", "examples", "scripts"), "--only", "26-memory-limits.js", dir})
	err := cmd.ExecuteContext(t.Context())
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1:\n%s", code, err, out.String())
	}
	want := []string{
		"DENY    Deployment shop/api (" + filepath.Join(dir, "apps", "deployments.yaml") + ", document 1): 26-memory-limits.js: " +
			"deployment api would run containers without a memory limit: main",
		"checked 5 objects from 2 files with 1 admission script (mode enforce): 1 denied, 0 warned, 0 mutated, 0 audited, 0 errors",
	}
	if got := strings.TrimSuffix(out.String(), "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("output:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// deploymentDoc is a Deployment "api" in ns whose container sets no memory limit.
func deploymentDoc(ns string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: " + ns + "}\nspec:\n  selector: {matchLabels: {app: api}}\n" +
		"  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: main, image: nginx:1.27}]}\n"
}
