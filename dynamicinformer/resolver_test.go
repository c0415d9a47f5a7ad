package dynamicinformer_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

func newResolver(t *testing.T) *dynamicinformer.Resolver {
	t.Helper()
	cp := controlplane.Require(t, env)
	return dynamicinformer.NewResolver(kubernetes.NewForConfigOrDie(cp.Config).Discovery(), nil)
}

func TestResolveSpellings(t *testing.T) {
	t.Parallel()
	r := newResolver(t)
	tests := []struct {
		name, want string
		namespaced bool
	}{
		{"apps/v1/deployments", "apps/v1/deployments", true},
		{"deployments.apps", "apps/v1/deployments", true},
		{"deployments.v1.apps", "apps/v1/deployments", true},
		{"deployments", "apps/v1/deployments", true},
		{"deployment", "apps/v1/deployments", true},
		{"deploy", "apps/v1/deployments", true},
		{"Deploy", "apps/v1/deployments", true},
		{"v1/pods", "v1/pods", true},
		{"po", "v1/pods", true},
		{"cm", "v1/configmaps", true},
		{"ns", "v1/namespaces", false},
		{"nodes", "v1/nodes", false},
		{"jobs.batch", "batch/v1/jobs", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Resolve(tt.name)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.name, err)
			}
			if got.String() != tt.want || got.Namespaced != tt.namespaced {
				t.Fatalf("Resolve(%q) = %s namespaced=%v, want %s namespaced=%v",
					tt.name, got, got.Namespaced, tt.want, tt.namespaced)
			}
		})
	}
}

func TestResolveUnknownSuggests(t *testing.T) {
	t.Parallel()
	r := newResolver(t)
	tests := []struct{ name, suggestion string }{
		{"deploymnets", "apps/v1/deployments"},
		{"configmap.apps", "v1/configmaps"},
		{"apps/v1/deploymentz", "apps/v1/deployments"},
	}
	for _, tt := range tests {
		_, err := r.Resolve(tt.name)
		if !errors.Is(err, dynamicinformer.ErrUnknownResource) {
			t.Fatalf("Resolve(%q) error = %v, want ErrUnknownResource", tt.name, err)
		}
		if !strings.Contains(err.Error(), tt.suggestion) {
			t.Fatalf("Resolve(%q) error %q does not suggest %s", tt.name, err, tt.suggestion)
		}
	}
	if _, err := r.Resolve("zzqqxx"); !errors.Is(err, dynamicinformer.ErrUnknownResource) {
		t.Fatalf("Resolve(zzqqxx) = %v, want ErrUnknownResource", err)
	}
}

func TestResolveCRDCreatedLater(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	r := newResolver(t)
	// Unique names let the test run again against the same server (CRDs are cluster-wide).
	id := uniqueName("late")
	group, short := id+".example.com", "gz"+strings.TrimPrefix(id, "late-")
	if _, err := r.Resolve("gizmos." + group); !errors.Is(err, dynamicinformer.ErrUnknownResource) {
		t.Fatalf("before the CRD exists: %v, want ErrUnknownResource", err)
	}
	createCRD(t, cp, group, "Gizmo", "gizmos", short)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := r.Resolve(short)
		if err == nil {
			if got.String() != group+"/v1/gizmos" {
				t.Fatalf("Resolve(%s) = %s", short, got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD never resolved: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createCRD creates a namespaced v1 CRD and waits until it is established.
func createCRD(t *testing.T, cp *controlplane.ControlPlane, group, kind, plural, short string) {
	t.Helper()
	client := apiextensionsclient.NewForConfigOrDie(cp.Config).ApiextensionsV1().CustomResourceDefinitions()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, Plural: plural, ShortNames: []string{short}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	if _, err := client.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	t.Cleanup(func() { _ = client.Delete(t.Context(), crd.Name, metav1.DeleteOptions{}) })
}
