package deploy_test

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestAuditComponent: the deploy/crds component adds the openreports.io CRDs and binds the
// runner's ServiceAccount (renamed and moved by the overlay) to the report rights; the base
// alone installs no CRD.
func TestAuditComponent(t *testing.T) {
	t.Parallel()
	if crds := kinds(renderBase(t), "CustomResourceDefinition"); len(crds) != 0 {
		t.Errorf("the base installs CRDs %v; it must not require them", crds)
	}
	fsys := baseFS(t)
	kustomization := "resources: [../deploy]\ncomponents: [../deploy/crds]\nnamespace: audit-ns\nnameSuffix: -x\n"
	if err := fsys.WriteFile("/overlay/kustomization.yaml", []byte(kustomization)); err != nil {
		t.Fatal(err)
	}
	objs := render(t, fsys, "/overlay")
	if crds := kinds(objs, "CustomResourceDefinition"); !slices.Equal(crds, []string{"clusterreports.openreports.io", "reports.openreports.io"}) {
		t.Errorf("CRDs = %v, want reports and clusterreports of openreports.io, unrenamed", crds)
	}
	var binding *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ClusterRoleBinding" && o.GetName() == "jsinformer-audit-reports-x" {
			binding = o
		}
	}
	if binding == nil {
		t.Fatalf("no ClusterRoleBinding jsinformer-audit-reports-x among %v", kinds(objs, "ClusterRoleBinding"))
	}
	subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
	if got := fmt.Sprint(subjects); got != "[map[kind:ServiceAccount name:jsinformer-x namespace:audit-ns]]" {
		t.Errorf("binding subjects = %s, want the overlay's ServiceAccount", got)
	}
	role, _, _ := unstructured.NestedString(binding.Object, "roleRef", "name")
	if role != "jsinformer-audit-reports-x" {
		t.Errorf("binding role = %q", role)
	}
}

// kinds returns the sorted names of the objects of kind.
func kinds(objs []*unstructured.Unstructured, kind string) []string {
	var out []string
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o.GetName())
		}
	}
	slices.Sort(out)
	return out
}
