package engine_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Helpers for tests that check what scripts did to the server.

var (
	secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	eventsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	jobsGVR    = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

var namespaceSeq atomic.Int64

// uniqueName gives a namespace name not used before in this test process, so that tests pass
// with -count=N against the one control plane.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, namespaceSeq.Add(1))
}

// admin is a cluster-admin dynamic client, for setting up objects before an engine starts.
func admin(t *testing.T) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(controlplane.Require(t, env).Config)
}

// mustCreate creates obj with client and fails the test on error.
func mustCreate(t *testing.T, client dynamic.Interface, gvr schema.GroupVersionResource, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	out, err := client.Resource(gvr).Namespace(u.GetNamespace()).Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
	return out
}

// fetch reads one object from the server.
func (r *runner) fetch(t *testing.T, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	return r.dyn.Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
}

// mustFetch reads one object from the server and fails the test when it is not there.
func (r *runner) mustFetch(t *testing.T, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := r.fetch(t, gvr, ns, name)
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return u
}

// eventually polls cond until it returns nil, failing the test with its last error after 15s.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	eventuallyWithin(t, 15*time.Second, what, cond)
}

// eventuallyWithin is eventually with its own deadline.
func eventuallyWithin(t *testing.T, within time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s: %v", what, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// gone is a condition: the object does not exist on the server.
func (r *runner) gone(t *testing.T, gvr schema.GroupVersionResource, ns, name string) func() error {
	return func() error {
		_, err := r.fetch(t, gvr, ns, name)
		switch {
		case err == nil:
			return fmt.Errorf("%s %s/%s still exists", gvr.Resource, ns, name)
		case apierrors.IsNotFound(err):
			return nil
		}
		return err
	}
}

// managers lists "manager/operation" of every managedFields entry of u.
func managers(u *unstructured.Unstructured) string {
	var out []string
	for _, m := range u.GetManagedFields() {
		out = append(out, m.Manager+"/"+string(m.Operation))
	}
	return strings.Join(out, ",")
}
