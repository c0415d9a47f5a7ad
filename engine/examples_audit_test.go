package engine_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
