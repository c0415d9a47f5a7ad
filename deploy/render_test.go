package deploy_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// render builds the kustomization in dir of fsys, as `kubectl kustomize` does, into objects in
// kustomize's output order.
func render(t *testing.T, fsys filesys.FileSystem, dir string) []*unstructured.Unstructured {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range m.Resources() {
		// Through JSON, so numbers are int64 as everywhere in apimachinery (Map gives int).
		data, err := r.MarshalJSON()
		obj := &unstructured.Unstructured{}
		if err == nil {
			err = obj.UnmarshalJSON(data)
		}
		if err != nil {
			t.Fatalf("render %s: %v", r.CurId(), err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// baseFS is an in-memory copy of this folder (the kustomize base) at /deploy, Go files left out.
func baseFS(t *testing.T) filesys.FileSystem {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return fsys.WriteFile(filepath.ToSlash(filepath.Join("/deploy", path)), data)
	})
	if err != nil {
		t.Fatalf("copy the base: %v", err)
	}
	return fsys
}

// renderBase renders deploy/ itself.
func renderBase(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return render(t, baseFS(t), "/deploy")
}

// renderOverlay renders the base through an overlay as a user would write one: everything moved
// into namespace ns and every name suffixed, so tests sharing a control plane (and -count=N
// runs) never collide, and kustomize's reference rewriting is exercised too.
func renderOverlay(t *testing.T, ns, suffix string) []*unstructured.Unstructured {
	t.Helper()
	fsys := baseFS(t)
	// Quoted: a random suffix of digits only would otherwise be a YAML number.
	kustomization := fmt.Sprintf("resources: [../deploy]\nnamespace: %q\nnameSuffix: %q\n", ns, "-"+suffix)
	if err := fsys.WriteFile("/overlay/kustomization.yaml", []byte(kustomization)); err != nil {
		t.Fatal(err)
	}
	return render(t, fsys, "/overlay")
}

// find returns the one rendered object of kind, failing the test when there is not exactly one.
func find(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		// The debug API's roles (debug-rbac.yaml) are not the runner's own objects.
		if o.GetKind() == kind && o.GetLabels()["app.kubernetes.io/component"] != "debug" {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("rendered %d objects of kind %s, want 1", len(found), kind)
	}
	return found[0]
}

// decode converts a rendered object into its typed form, failing on fields the type lacks.
func decode(t *testing.T, obj *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, into, true); err != nil {
		t.Fatalf("decode %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
}

// uniqueSuffix is a short random name part.
func uniqueSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
