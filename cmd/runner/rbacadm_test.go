package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// executeSplit runs the command as execute does, stdout and stderr apart.
func executeSplit(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

// admissionFolder has a validate-only policy, a script that reads a Secret by a constant name
// in the runner's namespace and declares net, and a watch.
func admissionFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"policy.js": "export default {\n  watch: \"apps/v1/deployments\",\n  validate(d) { if (d.spec.replicas > 50) return { allowed: false, message: \"too many\" }; },\n};\n",
		"slack.js": "export default {\n  watch: \"v1/configmaps\",\n  net: [\"hooks.slack.com\"],\n  onAdd() {\n" +
			"    k8s.get(\"v1/secrets\", \"ops\", \"slack-webhook\");\n  },\n};\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRBACAdmission: the webhook configurations are granted by name only when the flags
// register them, the certificate Secret by name only when the runner keeps one; the runner's
// namespace holds one Role; a validate-only script that never reads ctx.cache gets no list or
// watch; the net entries are named.
func TestRBACAdmission(t *testing.T) {
	t.Parallel()
	dir := admissionFolder(t)
	base := []string{"rbac", "--scripts", dir, "--service-account", "ops/runner"}
	const configs = "  - apiGroups: [admissionregistration.k8s.io]\n    resources: [mutatingwebhookconfigurations]\n    verbs: [create]\n" +
		"  # policy.js: admission\n  - apiGroups: [admissionregistration.k8s.io]\n    resources: [mutatingwebhookconfigurations]\n" +
		"    resourceNames: [%s]\n    verbs: [delete, get, update]\n"
	const secret = "    resources: [secrets]\n    resourceNames: [%s-tls]\n    verbs: [get, update]\n"
	tests := []struct {
		name            string
		flags           []string
		configs, secret string // the webhook name expected, "" for no grant
		stderr          string
	}{
		{"registered, default name", []string{"--webhook-service", "ops/hooks"}, "jsinformer-ops", "jsinformer-ops", ""},
		{"registered, named", []string{"--webhook-url", "https://127.0.0.1:9443", "--webhook-name", "pol"}, "pol", "pol", ""},
		{"dry-run registers nothing", []string{"--webhook-service", "ops/hooks", "--dry-run"}, "", "jsinformer-ops", ""},
		{"certificate from files", []string{"--webhook-service", "ops/hooks", "--webhook-cert-dir", "/certs"}, "jsinformer-ops", "", ""},
		{"files, no registration", []string{"--webhook-cert-dir", "/certs"}, "", "", ""},
		{"no webhook flag", nil, "", "", "policy.js define validate or mutate, but without --webhook-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, err := executeSplit(t, append(base, tt.flags...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			expectGrant(t, out, "webhook configurations", tt.configs, strings.ReplaceAll(configs, "%s", tt.configs), "webhookconfigurations")
			expectGrant(t, out, "certificate Secret", tt.secret, strings.ReplaceAll(secret, "%s", tt.secret), "-tls")
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.stderr)
			}
			if n := strings.Count(out, "\nkind: Role\n"); n != 1 {
				t.Errorf("%d Roles, want one (ops):\n%s", n, out)
			}
			for _, s := range []string{"resources: [secrets]\n    resourceNames: [slack-webhook]\n    verbs: [get]\n",
				"# policy.js: validate/mutate only and never reads ctx.cache: no list or watch",
				"# The scripts' net declarations need the runner's --allow-net hooks.slack.com\n"} {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			if strings.Contains(out, "resources: [deployments]") {
				t.Errorf("policy.js is granted a watch it does not use:\n%s", out)
			}
			check, errOut, err := executeSplit(t, slices.Concat(base, tt.flags, []string{"--check", rbacFile(t, out), "--strict"})...)
			if err != nil {
				t.Errorf("the printed RBAC fails its own check: %v\n%s%s", err, check, errOut)
			}
		})
	}
}

// expectGrant checks that out holds rule when name is set, and nothing matching marker when not.
func expectGrant(t *testing.T, out, what, name, rule, marker string) {
	t.Helper()
	switch {
	case name != "" && !strings.Contains(out, rule):
		t.Errorf("%s: output lacks\n%s\n%s", what, rule, out)
	case name == "" && strings.Contains(out, marker):
		t.Errorf("%s granted, want none:\n%s", what, out)
	}
}

// TestRBACCheckAsApplied: a file with two Roles of one name in one namespace (what `runner
// rbac` printed before it merged them) grants only what the last holds, as an apply keeps:
// --check names the Secret permissions the first Role held.
func TestRBACCheckAsApplied(t *testing.T) {
	t.Parallel()
	dir := admissionFolder(t)
	args := []string{"rbac", "--scripts", dir, "--service-account", "ops/runner", "--webhook-service", "ops/hooks"}
	const twoRoles = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: runner}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [list, watch]
- apiGroups: [admissionregistration.k8s.io]
  resources: [validatingwebhookconfigurations, mutatingwebhookconfigurations]
  verbs: [create, get, update, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: runner, namespace: ops}
rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: [create, get, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: runner, namespace: ops}
rules:
- apiGroups: [""]
  resources: [secrets]
  resourceNames: [slack-webhook]
  verbs: [get]
`
	out, err := execute(t, t.Context(), append(args, "--check", rbacFile(t, twoRoles))...)
	if exitCode(err) != 1 || !strings.Contains(out, "missing: policy.js needs get secrets named \"jsinformer-ops-tls\" in the runner's namespace") {
		t.Errorf("exit %d (%v), want the Secret the first Role held named missing:\n%s", exitCode(err), err, out)
	}
}

// TestRBACWebhookNameNeedsNamespace: the default webhook name is made from the runner's
// namespace; without one it cannot be printed.
func TestRBACWebhookNameNeedsNamespace(t *testing.T) {
	t.Parallel()
	dir := admissionFolder(t)
	_, errOut, err := executeSplit(t, "rbac", "--scripts", dir, "--webhook-service", "ops/hooks")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--webhook-name is required") {
		t.Errorf("exit %d (%v), want a usage error asking for --webhook-name\n%s", exitCode(err), err, errOut)
	}
	if _, errOut, err := executeSplit(t, "rbac", "--scripts", dir, "--webhook-service", "ops/hooks", "--webhook-name", "pol"); err != nil {
		t.Errorf("with --webhook-name: %v\n%s", err, errOut)
	}
	_, errOut, err = executeSplit(t, "rbac", "--scripts", dir, "--service-account", "ops/runner", "-o", "json", "--webhook-cert-dir", "/c")
	if err != nil || !strings.Contains(errOut, "note: the scripts' net declarations need --allow-net hooks.slack.com") {
		t.Errorf("JSON: %v; stderr %q lacks the --allow-net note", err, errOut)
	}
}

// TestTestPermissionsAdmission: `runner test --permissions` on a validate-only script grants
// it no watch, says so, and points to `runner rbac` for what serving admission takes.
func TestTestPermissionsAdmission(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"policy.js": "export default {\n  watch: { resource: \"v1/configmaps\", namespace: \"prod\" },\n" +
			"  validate(cm) { if (!cm.data) return { allowed: false, message: \"empty\" }; },\n};\n",
		"policy.test.js": "test(\"an empty ConfigMap is denied\", () => {\n  const h = harness(\"./policy.js\");\n" +
			"  expect(h.admit({ operation: \"CREATE\", object: { apiVersion: \"v1\", kind: \"ConfigMap\", metadata: { name: \"a\", namespace: \"prod\" } } }))" +
			".toMatchObject({ allowed: false });\n});\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, err := executeSplit(t, "test", "--permissions", filepath.Join(dir, "policy.test.js"))
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, stderr)
	}
	for _, s := range []string{"# policy.js: validate/mutate only and never reads ctx.cache: no list or watch",
		"# Serving policy.js's validate/mutate takes more, as the runner's"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "resources: [configmaps]") {
		t.Errorf("a watch granted to a script that needs none:\n%s", out)
	}
}
