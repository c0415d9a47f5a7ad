package permissions_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/scripting"
)

// folder copies example scripts into a new scripts folder and adds files given by name.
func folder(t *testing.T, examples []string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range examples {
		src, err := os.ReadFile(filepath.Join("..", "examples", "scripts", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(src)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// has reports whether needs hold script's verb on group/resource in namespace.
func has(needs []permissions.Need, script, verb, gr, ns string) bool {
	return slices.ContainsFunc(needs, func(n permissions.Need) bool {
		return n.Script == script && n.Verb == verb && n.GroupResource() == gr && n.Namespace == ns
	})
}

// TestComputeExampleScripts computes the needs of example scripts that use every kind of
// call: watches, literal and const resources, a helper's parameter fed from a for-of,
// server-side apply, finalizer and status helpers, Events.
func TestComputeExampleScripts(t *testing.T) {
	t.Parallel()
	dir := folder(t, []string{"01-log-changes.js", "04-widgets.ts", "05-replicate-secret.js", "07-ttl-cleanup.js", "14-widget-operator.js"},
		map[string]string{"package.json": "{}"})
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dynamic) != 0 {
		t.Errorf("dynamic calls %v, want none", rep.Dynamic)
	}
	want := []struct{ script, verb, gr, ns string }{
		{"01-log-changes.js", "list", "deployments.apps", ""},
		{"01-log-changes.js", "watch", "deployments.apps", ""},
		{"04-widgets.ts", "watch", "widgets.example.com", ""},
		{"05-replicate-secret.js", "watch", "namespaces", ""},
		{"05-replicate-secret.js", "patch", "secrets", ""},
		{"05-replicate-secret.js", "create", "secrets", ""}, // the apply may create
		{"05-replicate-secret.js", "list", "secrets", ""},
		{"05-replicate-secret.js", "delete", "secrets", ""},
		{"07-ttl-cleanup.js", "delete", "configmaps", ""},
		{"07-ttl-cleanup.js", "delete", "jobs.batch", ""},
		{"14-widget-operator.js", "get", "widgets.example.com", ""},
		{"14-widget-operator.js", "patch", "widgets.example.com", ""},
		{"14-widget-operator.js", "patch", "widgets/status.example.com", ""},
		{"14-widget-operator.js", "create", "events", ""},
		{"14-widget-operator.js", "patch", "events", ""},
		{"14-widget-operator.js", "patch", "configmaps", ""},
		{"14-widget-operator.js", "delete", "configmaps", ""},
	}
	for _, w := range want {
		if !has(rep.Needs, w.script, w.verb, w.gr, w.ns) {
			t.Errorf("%s: no need to %s %s in %q", w.script, w.verb, w.gr, w.ns)
		}
	}
	for _, n := range rep.Needs {
		if n.Script == "07-ttl-cleanup.js" && !slices.Contains([]string{"list", "watch", "delete"}, n.Verb) {
			t.Errorf("07-ttl-cleanup.js needs %s, which it never does", n)
		}
	}
	if !slices.Equal(rep.Scripts, []string{"01-log-changes.js", "04-widgets.ts", "05-replicate-secret.js", "07-ttl-cleanup.js", "14-widget-operator.js"}) {
		t.Errorf("scripts %v", rep.Scripts)
	}
}

// TestComputeDynamicAndDeclared: a call whose resource is known at run time only is reported
// with its place, unless the script declares permissions, which then count.
func TestComputeDynamicAndDeclared(t *testing.T) {
	t.Parallel()
	dir := folder(t, nil, map[string]string{
		"dyn.js": "export default {\n  watch: \"v1/configmaps\",\n  onAdd(cm) {\n    k8s.get(cm.data.kind, \"\", \"x\");\n  },\n};\n",
		"declared.js": "export default {\n  watch: { resource: \"v1/configmaps\", namespace: \"team-a\" },\n  permissions: [{ resource: \"v1/secrets\", verbs: [\"get\"], namespaces: [\"team-a\"] }],\n" +
			"  onAdd(cm) { k8s.get(cm.data.kind, \"team-a\", \"x\"); },\n};\n",
	})
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dynamic) != 1 || rep.Dynamic[0].Script != "dyn.js" || rep.Dynamic[0].Line != 4 || rep.Dynamic[0].Method != "get" {
		t.Fatalf("dynamic %+v, want dyn.js:4 k8s.get", rep.Dynamic)
	}
	if got := rep.Dynamic[0].String(); !strings.Contains(got, "dyn.js:4: k8s.get whose resource is known at run time only") {
		t.Errorf("report %q", got)
	}
	if !has(rep.Needs, "declared.js", "get", "secrets", "team-a") || !has(rep.Needs, "declared.js", "watch", "configmaps", "team-a") {
		t.Errorf("needs %v, want declared.js's declared get on secrets and its watch, in team-a", rep.Needs)
	}
}

// TestComputeDefaultsAndRunner: a script without watch gets --gvr within -n; the runner's own
// Leases and debug reviews are added.
func TestComputeDefaultsAndRunner(t *testing.T) {
	t.Parallel()
	dir := folder(t, nil, map[string]string{"log.js": "export default { onAdd() {} };\n"})
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir, Namespace: "web",
		Defaults: []scripting.WatchSpec{{Resource: "deploy"}},
		Runner:   permissions.Runner{LeaderElect: true, LeaseName: "x", DebugAuth: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !has(rep.Needs, "log.js", "watch", "deployments.apps", "web") {
		t.Errorf("needs %v, want watch deployments in web", rep.Needs)
	}
	var lease, review bool
	for _, n := range rep.Needs {
		lease = lease || (n.Resource == "leases" && n.Verb == "update" && n.ResourceName == "x" && n.Own)
		review = review || (n.Resource == "tokenreviews" && n.Verb == "create")
	}
	if !lease || !review {
		t.Errorf("needs %v: want update on Lease x in the runner's namespace and create tokenreviews", rep.Needs)
	}
}

// TestComputeFailsOnUnknownResource: an answer missing a script's needs would be wrong.
func TestComputeFailsOnUnknownResource(t *testing.T) {
	t.Parallel()
	dir := folder(t, nil, map[string]string{"w.js": "export default { watch: \"wdgts\", onAdd() {} };\n"})
	_, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), `w.js: watch: resolve resource "wdgts"`) {
		t.Errorf("error %v, want w.js's unknown resource", err)
	}
}

// TestComputeAdmission: a script with validate or mutate needs both webhook configurations
// (the registrar keeps its entry in each) and the certificate Secret in the runner's own
// namespace; a script without either needs none of that.
func TestComputeAdmission(t *testing.T) {
	t.Parallel()
	dir := folder(t, nil, map[string]string{
		"policy.js": "export default {\n  watch: \"v1/configmaps\",\n  validate() {},\n};\n",
		"patch.js":  "export default {\n  watch: \"v1/configmaps\",\n  mutate() {},\n};\n",
		"log.js":    "export default {\n  watch: \"v1/configmaps\",\n  onAdd() {},\n};\n",
	})
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{"policy.js", "patch.js"} {
		for _, gr := range []string{"validatingwebhookconfigurations.admissionregistration.k8s.io", "mutatingwebhookconfigurations.admissionregistration.k8s.io"} {
			for _, verb := range []string{"get", "create", "update", "delete"} {
				if !has(rep.Needs, script, verb, gr, "") {
					t.Errorf("%s needs no %s on %s", script, verb, gr)
				}
			}
		}
		secret := slices.ContainsFunc(rep.Needs, func(n permissions.Need) bool {
			return n.Script == script && n.Resource == "secrets" && n.Verb == "update" && n.Own
		})
		if !secret {
			t.Errorf("%s needs no update on the certificate Secret in the runner's namespace", script)
		}
	}
	if slices.ContainsFunc(rep.Needs, func(n permissions.Need) bool { return n.Script == "log.js" && n.Why == "admission" }) {
		t.Errorf("log.js has no validate or mutate but needs admission rights: %v", rep.Needs)
	}
}

// TestComputeAudit: a script with validate and admission.audit needs to write, read and
// delete openreports.io reports and clusterreports; one without audit needs none of that.
func TestComputeAudit(t *testing.T) {
	t.Parallel()
	dir := folder(t, nil, map[string]string{
		"audited.js":  "export default {\n  watch: \"v1/configmaps\",\n  validate() {},\n  admission: { audit: true },\n};\n",
		"enforced.js": "export default {\n  watch: \"v1/configmaps\",\n  validate() {},\n};\n",
	})
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, gr := range []string{"reports.openreports.io", "clusterreports.openreports.io"} {
		for _, verb := range []string{"create", "patch", "get", "list", "delete"} {
			if !has(rep.Needs, "audited.js", verb, gr, "") {
				t.Errorf("audited.js needs no %s on %s", verb, gr)
			}
		}
	}
	if slices.ContainsFunc(rep.Needs, func(n permissions.Need) bool { return n.Script == "enforced.js" && n.Group == "openreports.io" }) {
		t.Errorf("enforced.js does not audit but needs report rights: %v", rep.Needs)
	}
}
