package typegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

var env *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &env) }

var record = flag.Bool("record", false, "write the documents the control plane serves to testdata/openapi")

// recorded are the documents the unit tests read: the apps/v1 group as kube-apiserver v1.37.2
// serves it, and example.com/v1 from examples/crds/widgets.yaml.
var recorded = []string{"apis/apps/v1", "apis/example.com/v1"}

func recordedSource(path string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", "openapi", filepath.FromSlash(path)+".json"))
}

// clusterSource serves the control plane's documents, with the widgets CRD installed.
func clusterSource(t *testing.T) Source {
	t.Helper()
	cp := controlplane.Require(t, env)
	applyWidgets(t, dynamic.NewForConfigOrDie(cp.Config))
	disc := discovery.NewDiscoveryClientForConfigOrDie(cp.Config)
	deadline := time.Now().Add(30 * time.Second)
	for { // the CRD's document is published a moment after it is established
		src := ClusterSource(disc.OpenAPIV3())
		if _, err := src("apis/example.com/v1"); err == nil {
			return src
		} else if time.Now().After(deadline) {
			t.Fatalf("widgets' OpenAPI document not served: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func applyWidgets(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "crds", "widgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		t.Fatal(err)
	}
	crds := k8sschema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create the widgets CRD: %v", err)
	}
}

// TestRecordedDocumentsAreCurrent keeps the recorded documents those of the control plane the
// tests run: after a Kubernetes upgrade, run `go test ./internal/typegen -run Recorded -record`.
func TestRecordedDocumentsAreCurrent(t *testing.T) {
	src := clusterSource(t)
	for _, path := range recorded {
		live, err := src(path)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("testdata", "openapi", filepath.FromSlash(path)+".json")
		if *record {
			var indented bytes.Buffer
			if err := json.Indent(&indented, live, "", " "); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, indented.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		saved, err := recordedSource(path)
		if err != nil {
			t.Fatalf("read the recording (make it with -record): %v", err)
		}
		if !jsonEqual(t, live, saved) {
			t.Errorf("%s differs from what the control plane serves: record it again with -record", file)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := errors.Join(json.Unmarshal(a, &x), json.Unmarshal(b, &y)); err != nil {
		t.Fatal(err)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

// TestGenerateFromTheCluster generates the example CRD's and Deployment's interfaces from what
// the control plane serves.
func TestGenerateFromTheCluster(t *testing.T) {
	src := clusterSource(t)
	out, err := generate(src, []Resource{
		{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true},
	}, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"export interface Widget {\n",
		"  apiVersion: \"example.com/v1\";\n",
		"  metadata: ObjectMeta & { name: string; namespace: string };\n",
		"  spec?: {\n    color?: string;\n    size?: number;\n  };\n",
		"export interface Deployment {\n",
		"export interface PodSpec {\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}
