package deploy_test

import (
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// warnings collects the API server's Warning headers (deprecations, Pod Security violations).
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}

// cluster is a dynamic client and a REST mapper on the test control plane.
type cluster struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newCluster(t *testing.T, cfg *rest.Config) cluster {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cluster{dyn: dynamic.NewForConfigOrDie(cfg), mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

// resource is where obj is created: its resource, in its namespace when namespaced.
func (c cluster) resource(t *testing.T, obj *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gvk := obj.GroupVersionKind()
	m, err := c.mapper.RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version)
	if err != nil {
		t.Fatalf("map %s: %v", gvk, err)
	}
	if m.Scope.Name() == "namespace" {
		return c.dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
	}
	return c.dyn.Resource(m.Resource)
}

// create creates obj for real, or only validates it with dryRun; unknown and duplicate fields
// are errors, as with `kubectl apply --validate=strict`.
func (c cluster) create(t *testing.T, obj *unstructured.Unstructured, dryRun bool) error {
	t.Helper()
	opts := metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err := c.resource(t, obj).Create(t.Context(), obj, opts)
	return err
}

// createNamespace creates the rendered Namespace for real: objects cannot be created, even
// dry-run, in a namespace that does not exist. Without a namespace controller in the test
// control plane it is never removed; its name is unique.
func (c cluster) createNamespace(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	if err := c.create(t, find(t, objs, "Namespace"), false); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
}

// TestServerSideDryRun is `kubectl kustomize | kubectl apply --dry-run=server -f -` on a fresh
// cluster: every object passes validation and admission, with no warning (the pod template
// meets the namespace's restricted Pod Security Standard). The broken variants prove the test
// notices what it claims to.
func TestServerSideDryRun(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	tests := []struct {
		name        string
		break_      func(t *testing.T, objs []*unstructured.Unstructured)
		wantErr     string
		wantWarning string
	}{
		{name: "as shipped"},
		{name: "misspelled field", wantErr: `unknown field "spec.replica"`,
			break_: func(t *testing.T, objs []*unstructured.Unstructured) {
				set(t, find(t, objs, "Deployment"), int64(2), "spec", "replica")
			}},
		{name: "pod may run as root", wantWarning: "runAsNonRoot",
			break_: func(t *testing.T, objs []*unstructured.Unstructured) {
				d := find(t, objs, "Deployment")
				unstructured.RemoveNestedField(d.Object, "spec", "template", "spec", "securityContext", "runAsNonRoot")
				containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
				unstructured.RemoveNestedField(containers[0].(map[string]any), "securityContext", "runAsNonRoot")
				set(t, d, containers, "spec", "template", "spec", "containers")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			suffix := uniqueSuffix(t)
			objs := renderOverlay(t, "deploy-dryrun-"+suffix, suffix)
			if tt.break_ != nil {
				tt.break_(t, objs)
			}
			cfg := rest.CopyConfig(cp.Config)
			seen := &warnings{}
			cfg.WarningHandler = seen
			c := newCluster(t, cfg)
			c.createNamespace(t, objs)
			var errs []string
			for _, obj := range objs {
				if obj.GetKind() == "Namespace" {
					continue
				}
				if err := c.create(t, obj, true); err != nil {
					errs = append(errs, obj.GetKind()+" "+obj.GetName()+": "+err.Error())
				}
			}
			expect(t, "error", errs, tt.wantErr)
			expect(t, "warning", seen.take(), tt.wantWarning)
		})
	}
}

// expect fails unless got is empty (want == "") or one of got contains want.
func expect(t *testing.T, what string, got []string, want string) {
	t.Helper()
	if want == "" {
		for _, g := range got {
			t.Errorf("%s: %s", what, g)
		}
		return
	}
	for _, g := range got {
		if strings.Contains(g, want) {
			return
		}
	}
	t.Errorf("no %s mentions %q; got %q", what, want, got)
}

func set(t *testing.T, obj *unstructured.Unstructured, value any, path ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(obj.Object, value, path...); err != nil {
		t.Fatal(err)
	}
}
