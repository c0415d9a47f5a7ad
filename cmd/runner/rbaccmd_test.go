package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rbacFolder is a scripts folder with one script that watches Deployments and patches them.
func rbacFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := "const D = \"apps/v1/deployments\";\nexport default {\n  watch: D,\n  onAdd(d) {\n    k8s.patch(D, d.metadata.namespace, d.metadata.name, {});\n  },\n};\n"
	if err := os.WriteFile(filepath.Join(dir, "label.js"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rbacFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rbac.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestRBACCheck: --check names the script and verb a file lacks, --strict what it has too much.
func TestRBACCheck(t *testing.T) {
	t.Parallel()
	dir := rbacFolder(t)
	const role = "kind: ClusterRole\nmetadata: {name: r}\nrules:\n- apiGroups: [apps]\n  resources: [deployments]\n  verbs: [%s]\n"
	tests := []struct {
		name, verbs string
		strict      bool
		code        int
		want        string
	}{
		{"exact", "list, watch, patch", true, 0, "grants what the scripts of"},
		{"missing patch", "list, watch", false, 1,
			"missing: label.js needs patch deployments.apps in all namespaces (k8s.patch at label.js:5); grant it: kubectl create clusterrole NAME --verb=patch --resource=deployments.apps"},
		{"extra without strict", "list, watch, patch, delete", false, 0, "grants what"},
		{"extra with strict", "list, watch, patch, delete", true, 1, "extra: ClusterRole r grants delete deployments.apps, which no script needs"},
		{"wildcard", "\"*\"", false, 0, "grants what"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := rbacFile(t, strings.Replace(role, "%s", tt.verbs, 1))
			args := []string{"rbac", "--scripts", dir, "--check", file}
			if tt.strict {
				args = append(args, "--strict")
			}
			out, err := execute(t, t.Context(), args...)
			if exitCode(err) != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d (%v), want %d; output:\n%s\nwant it to contain %q", exitCode(err), err, tt.code, out, tt.want)
			}
		})
	}
}

// TestRBACPrint: the YAML names the script and why; JSON is a List; a printed file passes its
// own --check --strict.
func TestRBACPrint(t *testing.T) {
	t.Parallel()
	dir := rbacFolder(t)
	out, err := execute(t, t.Context(), "rbac", "--scripts", dir, "--service-account", "ops/runner", "--leader-elect")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"  # label.js: k8s.patch at label.js:5, watch\n  - apiGroups: [apps]\n    resources: [deployments]\n    verbs: [list, patch, watch]\n",
		"kind: Role\nmetadata:\n  name: runner\n  namespace: ops\n", "resourceNames: [jsinformer]"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	check, err := execute(t, t.Context(), "rbac", "--scripts", dir, "--leader-elect", "--check", rbacFile(t, out), "--strict")
	if err != nil {
		t.Errorf("the printed RBAC fails its own check: %v\n%s", err, check)
	}
	js, err := execute(t, t.Context(), "rbac", "--scripts", dir, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(js), &list); err != nil || list.Kind != "List" || len(list.Items) != 3 {
		t.Errorf("JSON %s (%v), want a List of ServiceAccount, ClusterRole, ClusterRoleBinding", js, err)
	}
	if check, err := execute(t, t.Context(), "rbac", "--scripts", dir, "--check", rbacFile(t, js), "--strict"); err != nil {
		t.Errorf("the printed JSON fails its own check: %v\n%s", err, check)
	}
}

func TestRBACUsageErrors(t *testing.T) {
	t.Parallel()
	dir := rbacFolder(t)
	for _, args := range [][]string{
		{"rbac"},
		{"rbac", "--scripts", dir, "-o", "xml"},
		{"rbac", "--scripts", dir, "--service-account", "a/b/c"},
		{"rbac", "--scripts", filepath.Join(dir, "missing")},
	} {
		if _, err := execute(t, t.Context(), args...); exitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestTestPermissions: `runner test --permissions` adds what a test's calls used to what the
// source shows: a read whose resource comes from the object appears only through the test.
func TestTestPermissions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"lookup.js": "export default {\n  watch: \"v1/configmaps\",\n  onAdd(cm) {\n    try { k8s.get(cm.data.target, cm.metadata.namespace, \"x\"); } catch (e) {}\n  },\n};\n",
		"lookup.test.js": "test(\"looks up its target\", () => {\n  const h = harness(\"./lookup.js\", { objects: [{ apiVersion: \"v1\", kind: \"ConfigMap\",\n" +
			"    metadata: { name: \"c\", namespace: \"team\" }, data: { target: \"v1/secrets\" } }] });\n  h.settle();\n});\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := execute(t, t.Context(), "test", "--permissions", filepath.Join(dir, "lookup.test.js"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, s := range []string{
		"NOT COVERED: lookup.js:4: k8s.get whose resource is known at run time only",
		"kind: Role\nmetadata:\n  name: jsinformer\n  namespace: team\n",
		"  # lookup.js: k8s.get in a test\n  - apiGroups: [\"\"]\n    resources: [secrets]\n    verbs: [get]\n",
		"  # lookup.js: watch\n  - apiGroups: [\"\"]\n    resources: [configmaps]\n    verbs: [list, watch]\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}
