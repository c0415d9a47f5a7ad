package engine_test

import (
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// TestExample25AuditTeamLabel: the team policy in audit mode publishes a Report of the
// Deployments already in its namespace, with the RBAC `runner rbac` generates for it.
func TestExample25AuditTeamLabel(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installReportCRDsOnly(t, dyn)
	ns := uniqueName("ex25")
	scripts := example(t, "25-audit-team-label.js")
	scripts["25-audit-team-label.js"] = strings.ReplaceAll(scripts["25-audit-team-label.js"], `namespace: "staging"`, `namespace: "`+ns+`"`)
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := dyn.Resource(namespacesGVR).Create(t.Context(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err) // before the engine: the generated Role lives in it
	}
	r := startEngine(t, scripts, asGenerated(t))
	defer r.checkGranted(t)
	r.create(t, deploymentsGVR, deployment(ns, "legacy", "nginx:1.27", 1))
	owned := deployment(ns, "owned", "nginx:1.27", 1)
	owned["metadata"].(map[string]any)["labels"] = map[string]any{"team": "payments"}
	r.create(t, deploymentsGVR, owned)

	var results map[string]string
	waitFor(t, "a report: legacy failing, owned passing", func() bool {
		u, err := dyn.Resource(reportGVR).Namespace(ns).Get(t.Context(), "jsinformer-25-audit-team-label-js", metav1.GetOptions{})
		if err != nil {
			return false
		}
		results = map[string]string{}
		items, _, _ := unstructured.NestedSlice(u.Object, "results")
		for _, it := range items {
			m := it.(map[string]any)
			name := m["resources"].([]any)[0].(map[string]any)["name"].(string)
			results[name] = m["result"].(string) + ": " + m["message"].(string)
		}
		return len(results) == 2
	})
	if got := results["legacy"]; got != `fail: deployment legacy has no "team" label` {
		t.Errorf("legacy: %q", got)
	}
	if got := results["owned"]; got != "pass: " {
		t.Errorf("owned: %q", got)
	}
}

// TestExample26MemoryLimits: the policy enforced for new Deployments audits the old ones in the
// namespaces that opted in by label only (its admission.namespaceSelector, read from the
// runner's cache of Namespaces, which `runner rbac` grants), follows a namespace that opts in
// later, and passes a Deployment once it is fixed.
func TestExample26MemoryLimits(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installReportCRDsOnly(t, dyn)
	in, out := uniqueName("ex26-in"), uniqueName("ex26-out")
	for _, ns := range []string{in, out} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if ns == in {
			obj.SetLabels(map[string]string{"policy.example.com/memory-limits": "required"})
		}
		if _, err := dyn.Resource(namespacesGVR).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := startEngine(t, example(t, "26-memory-limits.js"), asGenerated(t))
	defer r.checkGranted(t)
	r.create(t, deploymentsGVR, deployment(in, "legacy", "nginx:1.27", 1))
	r.create(t, deploymentsGVR, deployment(out, "legacy", "nginx:1.27", 1))

	const name = "jsinformer-26-memory-limits-js"
	const failing = "fail: deployment legacy runs containers without a memory limit: main"
	waitReport := func(ns, what string, want map[string]string) {
		t.Helper()
		var got map[string]string
		waitFor(t, what, func() bool {
			got = reportResults(t, dyn, ns, name)
			return maps.Equal(got, want)
		})
	}
	waitReport(in, "a report of the opted-in namespace: legacy failing", map[string]string{"legacy": failing})
	if got := reportResults(t, dyn, out, name); got != nil {
		t.Errorf("a report in %s, which did not opt in: %v", out, got)
	}
	_, err := dyn.Resource(namespacesGVR).Patch(t.Context(), out, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"policy.example.com/memory-limits":"required"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitReport(out, "a report once the namespace opts in", map[string]string{"legacy": failing})
	r.patch(t, deploymentsGVR, in, "legacy", `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.27","resources":{"limits":{"memory":"64Mi"}}}]}}}}`)
	waitReport(in, "legacy passing once fixed", map[string]string{"legacy": "pass: "})
}

// reportResults are the results of report ns/name by object name ("result: message"); nil
// when it does not exist.
func reportResults(t *testing.T, dyn dynamic.Interface, ns, name string) map[string]string {
	t.Helper()
	u, err := dyn.Resource(reportGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	results := map[string]string{}
	items, _, _ := unstructured.NestedSlice(u.Object, "results")
	for _, it := range items {
		m := it.(map[string]any)
		results[m["resources"].([]any)[0].(map[string]any)["name"].(string)] = m["result"].(string) + ": " + m["message"].(string)
	}
	return results
}
