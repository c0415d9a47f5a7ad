package memcluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// Fast unit tests of what the cross-check cannot show: resuming watches, barriers, CRDs
// served through discovery.

func newCluster(t *testing.T) *memcluster.Cluster {
	t.Helper()
	c, err := memcluster.New(memcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func configMap(name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetName(name)
	u.SetNamespace("default")
	u.SetLabels(labels)
	return u
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev := <-w.ResultChan():
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event within 5s")
		return watch.Event{}
	}
}

func TestWatchResumesFromAResourceVersion(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	first, err := c.Create(cmGVR, "default", configMap("a", nil), memcluster.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(cmGVR, "default", configMap("b", nil), memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(t.Context(), cmGVR, "default", metav1.ListOptions{ResourceVersion: first.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "b" {
		t.Fatalf("first event %s %v, want ADDED b (only what came after the resourceVersion)", ev.Type, ev.Object)
	}
}

func TestWatchFromTooOldAResourceVersionIsGone(t *testing.T) {
	t.Parallel()
	c, err := memcluster.New(memcluster.Options{History: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		if _, err := c.Create(cmGVR, "default", configMap(n, nil), memcluster.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.Watch(t.Context(), cmGVR, "default", metav1.ListOptions{ResourceVersion: "1"})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("err = %v, want 410 Expired", err)
	}
}

func TestBarrierFollowsEarlierEventsOnEveryWatch(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	w, err := c.Watch(t.Context(), cmGVR, "default", metav1.ListOptions{LabelSelector: "x=y"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.Create(cmGVR, "default", configMap("a", map[string]string{"x": "y"}), memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	n := c.Barrier()
	for _, want := range []string{"ADDED a", "ADDED barrier", "DELETED barrier"} {
		ev := next(t, w)
		u := ev.Object.(*unstructured.Unstructured)
		name := u.GetName()
		if got, ok := memcluster.IsBarrier(u); ok {
			if got != n {
				t.Fatalf("barrier %d, want %d", got, n)
			}
			name = "barrier"
		}
		if got := string(ev.Type) + " " + name; got != want {
			t.Fatalf("event %q, want %q", got, want)
		}
	}
}

func TestCRDResourcesAreServedAndResolvable(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	"metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced",
	"names":{"kind":"Widget","plural":"widgets","singular":"widget","shortNames":["wd"]},
	"versions":[{"name":"v1","served":true,"storage":true}]}}`)); err != nil {
		t.Fatal(err)
	}
	resolver := dynamicinformer.NewResolver(c.Discovery(), nil).WithoutThrottle()
	if _, err := resolver.Resolve("wd"); err == nil {
		t.Fatal("wd resolved before its CRD existed")
	}
	if _, err := c.Create(crdGVR, "", crd, memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := resolver.Resolve("wd")
	if err != nil {
		t.Fatal(err)
	}
	if res.String() != "example.com/v1/widgets" || !res.Namespaced || res.Kind != "Widget" {
		t.Fatalf("resolved %+v", res)
	}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "default"}}}
	if _, err := c.Create(res.GVR, "default", w, memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(crdGVR, "", "widgets.example.com", memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(res.GVR, "default", "w1"); err == nil || !strings.Contains(err.Error(), "could not find the requested resource") {
		t.Fatalf("get after the CRD went: %v, want the resource no longer served", err)
	}
}

func TestClientRecordsWrites(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	var writes []memcluster.Write
	dyn := c.Client(func(w memcluster.Write) { writes = append(writes, w) })
	ri := dyn.Resource(cmGVR).Namespace("default")
	ctx := context.Background()
	if _, err := ri.Create(ctx, configMap("a", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry-run create stored the object: %v", err)
	}
	err := ri.Delete(ctx, "a", metav1.DeleteOptions{})
	if len(writes) != 2 || writes[0].Verb != "create" || !writes[0].DryRun || writes[1].Verb != "delete" || !apierrors.IsNotFound(writes[1].Err) || err == nil {
		t.Fatalf("writes %+v", writes)
	}
}
