package k8sclient_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/scripting"
)

var env *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplane.Exit(m, &env) }

var (
	eventsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// setup returns a client on the control plane, the dynamic client behind it and a new
// namespace.
func setup(t *testing.T, opts k8sclient.Options) (*k8sclient.Client, dynamic.Interface, string) {
	t.Helper()
	cp := controlplane.Require(t, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	disc := discovery.NewDiscoveryClientForConfigOrDie(cp.Config)
	ns := fmt.Sprintf("k8sclient-%d", time.Now().UnixNano())
	_, err := dyn.Resource(namespacesGVR).Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return k8sclient.New(dyn, dynamicinformer.NewResolver(disc, nil), opts), dyn, ns
}

func configmap(ns, name string, data map[string]any) scripting.Object {
	return scripting.Object{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}, "data": data}
}

func TestVerbsAgainstTheServer(t *testing.T) {
	t.Parallel()
	c, _, ns := setup(t, k8sclient.Options{FieldManager: "tester"})
	ctx := t.Context()
	if _, err := c.Create(ctx, "configmaps", configmap(ns, "a", map[string]any{"k": "1"})); err != nil {
		t.Fatal(err)
	}
	got, err := c.Patch(ctx, "cm", ns, "a", []byte(`{"data":{"k":"2"}}`), scripting.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got, "data", "k"); v != "2" {
		t.Fatalf("patched data.k = %q, want 2", v)
	}
	list, err := c.List(ctx, "v1/configmaps", scripting.ListOptions{Namespace: ns, FieldSelector: "metadata.name=a"})
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %d items, %v; want 1", len(list), err)
	}
	if err := c.Delete(ctx, "configmaps", ns, "a", scripting.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "configmaps", ns, "a"); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}
	if _, err := c.Get(ctx, "configmaps", "", "a"); err == nil || !strings.Contains(err.Error(), "namespace required") {
		t.Fatalf("get without namespace: %v, want namespace required", err)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	c, _, ns := setup(t, k8sclient.Options{DryRun: true})
	ctx := t.Context()
	if _, err := c.Create(ctx, "configmaps", configmap(ns, "dry", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "configmaps", ns, "dry"); !apierrors.IsNotFound(err) {
		t.Fatalf("a dry-run create was stored: get answered %v", err)
	}
}

// A rejected write to a Secret reaches the caller with its code and reason, never the data
// the server echoed.
func TestSecretErrorsAreRedacted(t *testing.T) {
	t.Parallel()
	c, _, ns := setup(t, k8sclient.Options{})
	secret := scripting.Object{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": ns}, "data": map[string]any{"password": "hunter2!"}}
	_, err := c.Create(t.Context(), "secrets", secret)
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code < 400 || st.Status().Code >= 500 {
		t.Fatalf("create of a Secret with bad base64: %v, want a 4xx status", err)
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "the server's message is not shown") {
		t.Fatalf("error %q is not redacted", err)
	}
}

// Two callers recording the same Event at once, ten times each, make one Event counting 20:
// neither a second Event nor a lost repeat.
func TestConcurrentRepeatsOfOneEventAllCount(t *testing.T) {
	t.Parallel()
	c, dyn, ns := setup(t, k8sclient.Options{})
	obj, err := c.Create(t.Context(), "configmaps", configmap(ns, "target", nil))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 2 {
		wg.Go(func() {
			for range 10 {
				errs <- c.Event(t.Context(), obj, "Normal", "Seen", "the same event")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := dyn.Resource(eventsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var counts []int64
	for _, ev := range list.Items {
		n, _, _ := unstructured.NestedInt64(ev.Object, "count")
		counts = append(counts, n)
	}
	if fmt.Sprint(counts) != "[20]" {
		t.Fatalf("Event counts %v, want one Event counting 20", counts)
	}
}

// An Event the API server let expire is recorded anew rather than failing the script.
func TestRepeatOfAnExpiredEventCreatesAnother(t *testing.T) {
	t.Parallel()
	c, dyn, ns := setup(t, k8sclient.Options{})
	obj, err := c.Create(t.Context(), "configmaps", configmap(ns, "target", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Event(t.Context(), obj, "Warning", "Gone", "soon expired"); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(eventsGVR).Namespace(ns).DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Event(t.Context(), obj, "Warning", "Gone", "soon expired"); err != nil {
		t.Fatalf("repeat after expiry: %v", err)
	}
	list, err := dyn.Resource(eventsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("events after expiry = %d, %v; want 1 recorded anew", len(list.Items), err)
	}
}
