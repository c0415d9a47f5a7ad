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

// needsOf are script's needs as "verb resource[/name] in namespace", sorted.
func needsOf(needs []permissions.Need, script string) []string {
	var out []string
	for _, n := range needs {
		if n.Script != script {
			continue
		}
		s := n.Verb + " " + n.GroupResource()
		if n.ResourceName != "" {
			s += "/" + n.ResourceName
		}
		switch {
		case n.Own:
			s += " in (own)"
		case n.Namespace != "":
			s += " in " + n.Namespace
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// TestComputeAdmission: a script with validate or mutate needs what the runner's admission
// side uses, as Admission says, by name: both webhook configurations when it registers them
// (create not limited by name: it cannot be), the certificate Secret when it keeps one; a
// script without either needs none of that. A validate- or mutate-only script that never
// reads ctx.cache needs no list or watch; one that reads it, or has another handler, does.
func TestComputeAdmission(t *testing.T) {
	t.Parallel()
	dir := folder(t, nil, map[string]string{
		"policy.js": "export default {\n  watch: \"v1/configmaps\",\n  validate() {},\n};\n",
		"unique.js": "export default {\n  watch: \"v1/configmaps\",\n  validate(o, ctx) { return !ctx.cache.get(\"a\", \"b\"); },\n};\n",
		"log.js":    "export default {\n  watch: \"v1/configmaps\",\n  onAdd() {},\n};\n",
		"both.js":   "export default {\n  watch: \"v1/pods\",\n  onAdd() {},\n  mutate(o) { return o; },\n};\n",
	})
	configs := func(kind string) []string {
		return []string{"create " + kind + "webhookconfigurations.admissionregistration.k8s.io",
			"delete " + kind + "webhookconfigurations.admissionregistration.k8s.io/hooks",
			"get " + kind + "webhookconfigurations.admissionregistration.k8s.io/hooks",
			"update " + kind + "webhookconfigurations.admissionregistration.k8s.io/hooks"}
	}
	secret := []string{"create secrets in (own)", "get secrets/hooks-tls in (own)", "update secrets/hooks-tls in (own)"}
	full := slices.Concat(configs("mutating"), secret, configs("validating"))
	for _, tt := range []struct {
		name string
		adm  permissions.Admission
		want map[string][]string
	}{
		{"registered, certificate in a Secret", permissions.Admission{ConfigName: "hooks", Secret: "hooks-tls"}, map[string][]string{
			"policy.js": full,
			"unique.js": slices.Concat(full[:4], []string{"list configmaps", "watch configmaps"}, full[4:]),
			"log.js":    {"list configmaps", "watch configmaps"},
			"both.js":   slices.Concat(full[:4], []string{"list pods", "watch pods"}, full[4:]),
		}},
		{"served, not registered (--dry-run)", permissions.Admission{Secret: "hooks-tls"}, map[string][]string{"policy.js": secret}},
		{"registered, certificate from files", permissions.Admission{ConfigName: "hooks"}, map[string][]string{
			"policy.js": slices.Concat(configs("mutating"), configs("validating"))}},
		{"no admission served", permissions.Admission{}, map[string][]string{"policy.js": nil, "log.js": {"list configmaps", "watch configmaps"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir, Admission: tt.adm})
			if err != nil {
				t.Fatal(err)
			}
			for script, want := range tt.want {
				slices.Sort(want)
				if got := needsOf(rep.Needs, script); !slices.Equal(got, want) {
					t.Errorf("%s needs\n got %q\nwant %q", script, got, want)
				}
			}
			if !slices.Equal(rep.Admission, []string{"both.js", "policy.js", "unique.js"}) || !slices.Equal(rep.Unwatched, []string{"policy.js"}) {
				t.Errorf("admission scripts %v, unwatched %v", rep.Admission, rep.Unwatched)
			}
		})
	}
}

// TestComputeNames: a call that names its object by a constant needs its verb on that object
// only; a create never is limited by name, nor a name known at run time only.
func TestComputeNames(t *testing.T) {
	t.Parallel()
	dir := folder(t, nil, map[string]string{"slack.js": "const S = \"slack-webhook\";\nexport default {\n  watch: \"v1/configmaps\",\n  onAdd(cm) {\n" +
		"    k8s.get(\"v1/secrets\", \"ops\", S);\n    k8s.patch(\"v1/secrets\", \"ops\", \"copy\", {}, { type: \"apply\" });\n" +
		"    k8s.delete(\"v1/secrets\", \"ops\", cm.metadata.name);\n  },\n};\n",
		"net.js":  "export default { watch: \"v1/pods\", net: [\"hooks.slack.com\", \"api.example.invalid:8443\"], onAdd() {} };\n",
		"net2.js": "export default { watch: \"v1/pods\", net: [\"hooks.slack.com\"], onAdd() {} };\n",
	})
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"create secrets in ops", "delete secrets in ops", "get secrets/slack-webhook in ops", "list configmaps",
		"patch secrets/copy in ops", "watch configmaps"}
	if got := needsOf(rep.Needs, "slack.js"); !slices.Equal(got, want) {
		t.Errorf("needs\n got %q\nwant %q", got, want)
	}
	if got := rep.AllowNet(); !slices.Equal(got, []string{"api.example.invalid:8443", "hooks.slack.com"}) {
		t.Errorf("AllowNet() = %q", got)
	}
}

// TestComputeAudit: a script with validate and admission.audit needs to write, read and
// delete openreports.io reports and clusterreports; one without audit needs none of that.
// An audit selecting namespaces by label lists and watches namespaces; one excluding them by
// name, or a selector without audit (the API server matches it), does not.
func TestComputeAudit(t *testing.T) {
	t.Parallel()
	dir := folder(t, nil, map[string]string{
		"audited.js":  "export default {\n  watch: \"v1/configmaps\",\n  validate() {},\n  admission: { audit: true, excludeNamespaces: [\"x\"] },\n};\n",
		"enforced.js": "export default {\n  watch: \"v1/configmaps\",\n  validate() {},\n  admission: { namespaceSelector: { matchLabels: { a: \"b\" } } },\n};\n",
		"selected.js": "export default {\n  watch: \"v1/configmaps\",\n  validate() {},\n  admission: { audit: true, namespaceSelector: { matchLabels: { a: \"b\" } } },\n};\n",
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
	for _, verb := range []string{"list", "watch"} {
		if !has(rep.Needs, "selected.js", verb, "namespaces", "") {
			t.Errorf("selected.js needs no %s on namespaces: %v", verb, rep.Needs)
		}
	}
	if slices.ContainsFunc(rep.Needs, func(n permissions.Need) bool {
		return n.Resource == "namespaces" && (n.Script == "audited.js" || n.Script == "enforced.js")
	}) {
		t.Errorf("a script that does not select namespaces by label in an audit needs namespaces: %v", rep.Needs)
	}
}

// TestComputeOutbox: a script with an outbox needs to record Events (a message given up is a
// Warning Event on the object it names), besides its watches and calls (the example's Secret).
func TestComputeOutbox(t *testing.T) {
	t.Parallel()
	dir := folder(t, []string{"27-rollout-notifier-once.js"}, map[string]string{
		"plain.js": `export default { watch: "v1/configmaps", onAdd() {} };`,
	})
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const script = "27-rollout-notifier-once.js"
	for _, verb := range []string{"create", "patch"} {
		if !has(rep.Needs, script, verb, "events", "") {
			t.Errorf("%s: no need to %s events", script, verb)
		}
		if has(rep.Needs, "plain.js", verb, "events", "") {
			t.Errorf("plain.js, without an outbox, needs to %s events", verb)
		}
	}
	if !has(rep.Needs, script, "get", "secrets", "jsinformer") {
		t.Errorf("%s: no need to get its Secret: %v", script, needsOf(rep.Needs, script))
	}
}
