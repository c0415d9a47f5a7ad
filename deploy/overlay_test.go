package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// documentedOverlay is the kustomization.yaml that docs/deploy.md tells users to write: the
// YAML block that starts with the line "# my-jsinformer/kustomization.yaml".
func documentedOverlay(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(# my-jsinformer/kustomization.yaml\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/deploy.md has no yaml block starting with # my-jsinformer/kustomization.yaml")
	}
	return m[1]
}

// TestDocumentedOverlay renders the overlay docs/deploy.md shows, beside a copy of the base as
// the docs lay it out, and checks it does what the docs say: the user's image, only the user's
// scripts in a ConfigMap that keeps its fixed name (so updates hot-reload), the added rule.
func TestDocumentedOverlay(t *testing.T) {
	t.Parallel()
	fsys := baseFS(t)
	const script = "export default { watch: \"apps/v1/deployments\", onAdd() {} };\n"
	for path, data := range map[string][]byte{
		"/my-jsinformer/kustomization.yaml":    documentedOverlay(t),
		"/my-jsinformer/scripts/label-team.js": []byte(script),
	} {
		if err := fsys.WriteFile(path, data); err != nil {
			t.Fatal(err)
		}
	}
	objs := render(t, fsys, "/my-jsinformer")
	var cm corev1.ConfigMap
	decode(t, find(t, objs, "ConfigMap"), &cm)
	if cm.Name != "jsinformer-scripts" || len(cm.Data) != 1 || cm.Data["label-team.js"] != script {
		t.Errorf("scripts ConfigMap %s holds %d keys: want jsinformer-scripts with label-team.js only", cm.Name, len(cm.Data))
	}
	var d appsv1.Deployment
	decode(t, find(t, objs, "Deployment"), &d)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "registry.example.com/platform/jsinformer:v0.1.0" {
		t.Errorf("image %q, want the overlay's", got)
	}
	if got := d.Spec.Template.Spec.Volumes[0].ConfigMap; got == nil || got.Name != cm.Name {
		t.Errorf("scripts volume %+v does not mount %s", got, cm.Name)
	}
	var role rbacv1.ClusterRole
	decode(t, find(t, objs, "ClusterRole"), &role)
	added := rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"patch"}}
	if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return equalRule(r, added) }) {
		t.Errorf("ClusterRole rules %+v lack the overlay's %+v", role.Rules, added)
	}
}

func equalRule(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) && slices.Equal(a.Verbs, b.Verbs)
}
