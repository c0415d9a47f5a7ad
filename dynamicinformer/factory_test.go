package dynamicinformer_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// watchCounter counts watch requests (streaming lists included) per URL path.
type watchCounter struct{ n atomic.Int64 }

func (c *watchCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Query().Get("watch") == "true" && strings.HasSuffix(req.URL.Path, "/configmaps") {
			c.n.Add(1)
		}
		return rt.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func newFactory(t *testing.T, counter *watchCounter) (*dynamicinformer.Factory, *kubernetes.Clientset) {
	t.Helper()
	cp := controlplane.Require(t, env)
	cfg := rest.CopyConfig(cp.Config)
	if counter != nil {
		cfg.Wrap(counter.wrap)
	}
	client, err := dynamicinformer.NewClient(cfg)
	if err != nil {
		t.Fatalf("create informer client: %v", err)
	}
	f := dynamicinformer.NewFactory(client, dynamicinformer.Options{})
	t.Cleanup(f.Shutdown)
	return f, kubernetes.NewForConfigOrDie(cp.Config)
}

func createNamespace(t *testing.T, client *kubernetes.Clientset, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
}

func waitSynced(t *testing.T, inf cache.SharedIndexInformer) {
	t.Helper()
	ctx, cancel := contextWithTimeout(t, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync within 30s")
	}
}

func TestAcquireSharesOneWatch(t *testing.T) {
	t.Parallel()
	counter := &watchCounter{}
	f, client := newFactory(t, counter)
	ns := uniqueName("share")
	createNamespace(t, client, ns)
	key := dynamicinformer.Key{GVR: configmaps, Namespace: ns}
	a, err := f.Acquire(key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Acquire(key)
	if err != nil {
		t.Fatal(err)
	}
	if a.Informer() != b.Informer() {
		t.Fatal("two acquires of one key got different informers")
	}
	waitSynced(t, a.Informer())
	if got := counter.n.Load(); got != 1 {
		t.Fatalf("watch requests = %d, want 1 for two users of one key", got)
	}
	other, err := f.Acquire(dynamicinformer.Key{GVR: configmaps, Namespace: ns, LabelSelector: "x=y"})
	if err != nil {
		t.Fatal(err)
	}
	if other.Informer() == a.Informer() {
		t.Fatal("a different label selector shared the informer")
	}
	a.Release()
	a.Release() // idempotent
	if refs := f.Active()[key]; refs != 1 {
		t.Fatalf("refs after one release = %d, want 1", refs)
	}
	b.Release()
	if _, ok := f.Active()[key]; ok {
		t.Fatal("informer still active after its last release")
	}
	other.Release()
}

func TestInformerStopsAfterLastRelease(t *testing.T) {
	t.Parallel()
	f, client := newFactory(t, nil)
	ns := uniqueName("stops")
	createNamespace(t, client, ns)
	h, err := f.Acquire(dynamicinformer.Key{GVR: configmaps, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	waitSynced(t, h.Informer())
	h.Release()
	deadline := time.Now().Add(10 * time.Second)
	for !h.Informer().IsStopped() {
		if time.Now().After(deadline) {
			t.Fatal("informer not stopped 10s after its last release")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestManagedFieldsStripped(t *testing.T) {
	t.Parallel()
	f, client := newFactory(t, nil)
	ns := uniqueName("stripped")
	createNamespace(t, client, ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": "b"}}
	created, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.ManagedFields) == 0 {
		t.Fatal("server returned no managedFields; the test proves nothing")
	}
	h, err := f.Acquire(dynamicinformer.Key{GVR: configmaps, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	waitSynced(t, h.Informer())
	obj, ok, err := h.Informer().GetStore().GetByKey(ns + "/c")
	if err != nil || !ok {
		t.Fatalf("cached object missing: %v", err)
	}
	u := obj.(*unstructured.Unstructured)
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields"); found {
		t.Fatal("managedFields still in the cache")
	}
	if got, _, _ := unstructured.NestedString(u.Object, "data", "a"); got != "b" {
		t.Fatalf("data.a = %q, want b", got)
	}
}

func TestAcquireAfterShutdownFails(t *testing.T) {
	t.Parallel()
	f, _ := newFactory(t, nil)
	f.Shutdown()
	_, err := f.Acquire(dynamicinformer.Key{GVR: configmaps})
	if err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Fatalf("Acquire after Shutdown = %v", err)
	}
}
