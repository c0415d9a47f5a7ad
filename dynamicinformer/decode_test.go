package dynamicinformer_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	kdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// oddSpec is a custom object's spec with JSON that is easy to decode wrongly.
func oddSpec(i int) string {
	return fmt.Sprintf(`{"n":%d,"big":12345678901234567890,"neg":-9223372036854775808,"maxint":9223372036854775807,`+
		`"exp":1e3,"small":1.5e-7,"frac":1.0,"half":0.5,"negzero":-0.0,`+
		`"text":"\ud83d\ude00 \u00e9\u20ac <&> \"q\" \\ \n\t","lone":"\ud800x","dup":1,"dup":2,`+
		`"deep":%s1%s,"empty":{},"none":[],"nil":null,"flags":[true,false]}`,
		i, strings.Repeat(`{"d":[`, 40), strings.Repeat(`]}`, 40))
}

// TestInformerCacheMatchesClientGo runs an informer of the Factory (NewClient's decoder)
// and a client-go dynamic informer with the managedFields transform side by side on custom
// objects with odd JSON, through the initial list (a LIST, or a streaming list) and then
// watch events, and requires their caches to hold equal objects, and a List through both
// clients to agree. The LIST must be one consistent read (no resourceVersion, no limit).
func TestInformerCacheMatchesClientGo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		streaming bool
		wantLists []string // the list requests' resourceVersion, limit and whether they continue
	}{
		{"list", false, []string{"rv= limit= continue=false"}},
		{"streaming list", true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testInformerCacheMatchesClientGo(t, tc.streaming, tc.wantLists)
		})
	}
}

func testInformerCacheMatchesClientGo(t *testing.T, streaming bool, wantLists []string) {
	cp := controlplane.Require(t, env)
	id := uniqueName("odd")
	group := id + ".example.com"
	createCRD(t, cp, group, "Oddity", "oddities", "od"+strings.TrimPrefix(id, "odd-"))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "oddities"}
	ns := uniqueName("odd")
	createNamespace(t, kubernetes.NewForConfigOrDie(cp.Config), ns)
	ref := dynamic.NewForConfigOrDie(cp.Config)
	waitServed(t, ref, gvr)
	createOdd(t, ref, gvr, ns, 0, 5)

	lists := &listLog{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(lists.wrap)
	fast, err := dynamicinformer.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := dynamicinformer.NewFactory(fast, dynamicinformer.Options{StreamingLists: streaming})
	t.Cleanup(f.Shutdown)
	h, err := f.Acquire(dynamicinformer.Key{GVR: gvr, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	want := referenceInformer(t, ref, gvr, ns)
	waitSynced(t, h.Informer())
	waitSynced(t, want)
	waitSameCache(t, h.Informer(), want, 5)
	if got := lists.get(); !reflect.DeepEqual(got, wantLists) {
		t.Fatalf("list requests %q, want %q", got, wantLists)
	}

	// Watch events: more objects, an update, a delete.
	createOdd(t, ref, gvr, ns, 5, 8)
	patch := []byte(`{"spec":{"n":1e2,"added":"\u00fc","dup":3,"dup":4}}`)
	if _, err := ref.Resource(gvr).Namespace(ns).Patch(t.Context(), "o-1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	if err := ref.Resource(gvr).Namespace(ns).Delete(t.Context(), "o-2", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitSameCache(t, h.Informer(), want, 7)
	compareLists(t, ref, fast, gvr, ns)
}

// listLog records the list requests (not watches) a client sends, as
// "rv=<resourceVersion> limit=<limit> continue=<whether a token was sent>".
type listLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *listLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if q := req.URL.Query(); req.Method == http.MethodGet && q.Get("watch") != "true" {
			l.mu.Lock()
			l.reqs = append(l.reqs, fmt.Sprintf("rv=%s limit=%s continue=%t", q.Get("resourceVersion"), q.Get("limit"), q.Get("continue") != ""))
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (l *listLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...)
}

// waitServed polls until the apiserver serves gvr: a new CRD takes a moment to be.
func waitServed(t *testing.T, client dynamic.Interface, gvr schema.GroupVersionResource) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := client.Resource(gvr).List(t.Context(), metav1.ListOptions{Limit: 1})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not served within 30s: %v", gvr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createOdd creates custom objects o-from .. o-(to-1) from raw JSON.
func createOdd(t *testing.T, client dynamic.Interface, gvr schema.GroupVersionResource, ns string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		body := fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"Oddity","metadata":{"name":"o-%d","labels":{"i":"%d"}},"spec":%s}`,
			gvr.Group, i, i, oddSpec(i))
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(body)); err != nil {
			t.Fatalf("decode object %d: %v", i, err)
		}
		if _, err := client.Resource(gvr).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create object %d: %v", i, err)
		}
	}
}

// referenceInformer runs client-go's dynamic informer with the managedFields transform.
func referenceInformer(t *testing.T, client dynamic.Interface, gvr schema.GroupVersionResource, ns string) cache.SharedIndexInformer {
	t.Helper()
	inf := kdynamicinformer.NewFilteredDynamicInformer(client, gvr, ns, 0, cache.Indexers{}, nil).Informer()
	if err := inf.SetTransform(dynamicinformer.StripManagedFields); err != nil {
		t.Fatal(err)
	}
	go inf.RunWithContext(t.Context())
	return inf
}

// waitSameCache polls until both caches hold n objects at the same resourceVersions, then
// requires the objects to be equal.
func waitSameCache(t *testing.T, got, want cache.SharedIndexInformer, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !sameVersions(got.GetStore().List(), want.GetStore().List(), n) {
		if time.Now().After(deadline) {
			t.Fatalf("caches never agreed: %d and %d objects", len(got.GetStore().List()), len(want.GetStore().List()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, w := range want.GetStore().List() {
		key, _ := cache.MetaNamespaceKeyFunc(w)
		g, ok, err := got.GetStore().GetByKey(key)
		if err != nil || !ok {
			t.Fatalf("%s missing from the cache: %v", key, err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s differs:\n got %v\nwant %v", key, g.(*unstructured.Unstructured).Object, w.(*unstructured.Unstructured).Object)
		}
	}
}

func sameVersions(a, b []any, n int) bool {
	if len(a) != n || len(b) != n {
		return false
	}
	versions := map[string]bool{}
	for _, o := range a {
		versions[o.(*unstructured.Unstructured).GetResourceVersion()] = true
	}
	for _, o := range b {
		if !versions[o.(*unstructured.Unstructured).GetResourceVersion()] {
			return false
		}
	}
	return true
}

// compareLists lists through both clients: NewClient's items are client-go's without
// managedFields, which the server sent.
func compareLists(t *testing.T, ref, fast dynamic.Interface, gvr schema.GroupVersionResource, ns string) {
	t.Helper()
	want, err := ref.Resource(gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fast.Resource(gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != len(want.Items) || len(want.Items) == 0 || len(want.Items[0].GetManagedFields()) == 0 {
		t.Fatalf("lists of %d and %d items (managedFields sent: %t)", len(got.Items), len(want.Items), len(want.Items) > 0 && len(want.Items[0].GetManagedFields()) > 0)
	}
	for i := range want.Items {
		w := &want.Items[i]
		if _, err := dynamicinformer.StripManagedFields(w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got.Items[i], w) {
			t.Fatalf("item %d differs:\n got %v\nwant %v", i, got.Items[i].Object, w.Object)
		}
	}
}
