package memcluster_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// recordingHook labels what it mutates, denies names starting with "deny-" in the phase
// named by denyIn, and records every call as "PHASE OPERATION name sub" plus what it saw.
type recordingHook struct {
	c      *memcluster.Cluster
	denyIn string // "Mutate" or "Validate"

	mu    sync.Mutex
	calls []string
}

var errDenied = apierrors.NewForbidden(cmGVR.GroupResource(), "x", errors.New("denied by the hook"))

func (h *recordingHook) record(phase string, req memcluster.AdmissionRequest) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	call := fmt.Sprintf("%s %s %s", phase, req.Operation, req.Name)
	if req.Subresource != "" {
		call += " /" + req.Subresource
	}
	if req.Object != nil && req.Object.GetUID() != "" {
		call += " uid"
	}
	if req.OldObject != nil {
		call += " old"
	}
	h.calls = append(h.calls, call)
	// The hook runs without the cluster's mutex: reading it must not deadlock.
	if _, err := h.c.List(cmGVR, "default", metav1.ListOptions{}); err != nil {
		return err
	}
	if phase == h.denyIn && len(req.Name) > 5 && req.Name[:5] == "deny-" {
		return errDenied
	}
	return nil
}

func (h *recordingHook) Mutate(req memcluster.AdmissionRequest) (*unstructured.Unstructured, error) {
	if err := h.record("Mutate", req); err != nil || req.Object == nil {
		return nil, err
	}
	out := req.Object.DeepCopy()
	labels := out.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["mutated"] = req.Operation
	out.SetLabels(labels)
	return out, nil
}

func (h *recordingHook) Validate(req memcluster.AdmissionRequest) error {
	return h.record("Validate", req)
}

func (h *recordingHook) taken() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.calls
	h.calls = nil
	return out
}

func TestAdmissionHookSeesEveryWrite(t *testing.T) {
	t.Parallel()
	apply := func(name string) func(c *memcluster.Cluster) (*unstructured.Unstructured, error) {
		return func(c *memcluster.Cluster) (*unstructured.Unstructured, error) {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":"applied"}}`, name)
			return c.Patch(cmGVR, "default", name, types.ApplyPatchType, []byte(body), memcluster.WriteOptions{FieldManager: "t"})
		}
	}
	tests := []struct {
		name   string
		seed   bool // a ConfigMap "existing" is there before the hook
		write  func(c *memcluster.Cluster) (*unstructured.Unstructured, error)
		calls  []string
		stored string // the "mutated" label stored on "existing", or "" when it is gone
	}{
		{name: "create", write: func(c *memcluster.Cluster) (*unstructured.Unstructured, error) {
			return c.Create(cmGVR, "default", configMap("existing", nil), memcluster.WriteOptions{})
		}, calls: []string{"Mutate CREATE existing", "Validate CREATE existing uid"}, stored: "CREATE"},
		{name: "update", seed: true, write: func(c *memcluster.Cluster) (*unstructured.Unstructured, error) {
			// The body has no uid: the server fills it in after the mutating webhooks.
			return c.Update(cmGVR, "default", configMap("existing", map[string]string{"a": "b"}), memcluster.WriteOptions{})
		}, calls: []string{"Mutate UPDATE existing old", "Validate UPDATE existing uid old"}, stored: "UPDATE"},
		{name: "merge patch", seed: true, write: func(c *memcluster.Cluster) (*unstructured.Unstructured, error) {
			return c.Patch(cmGVR, "default", "existing", types.MergePatchType, []byte(`{"data":{"k":"v"}}`), memcluster.WriteOptions{})
		}, calls: []string{"Mutate UPDATE existing uid old", "Validate UPDATE existing uid old"}, stored: "UPDATE"},
		{name: "apply creating", write: apply("existing"),
			calls: []string{"Mutate CREATE existing", "Validate CREATE existing uid"}, stored: "CREATE"},
		{name: "apply updating", seed: true, write: apply("existing"),
			calls: []string{"Mutate UPDATE existing uid old", "Validate UPDATE existing uid old"}, stored: "UPDATE"},
		{name: "delete", seed: true, write: func(c *memcluster.Cluster) (*unstructured.Unstructured, error) {
			return c.Delete(cmGVR, "default", "existing", memcluster.WriteOptions{})
		}, calls: []string{"Mutate DELETE existing old", "Validate DELETE existing old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t)
			if tt.seed {
				if _, err := c.Create(cmGVR, "default", configMap("existing", nil), memcluster.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			hook := &recordingHook{c: c}
			c.SetAdmission(hook)
			if _, err := tt.write(c); err != nil {
				t.Fatal(err)
			}
			if got := hook.taken(); !slices.Equal(got, tt.calls) {
				t.Errorf("hook calls = %q, want %q", got, tt.calls)
			}
			got, err := c.Get(cmGVR, "default", "existing")
			switch {
			case tt.stored == "" && !apierrors.IsNotFound(err):
				t.Errorf("after the write: %v, %v; want it gone", got, err)
			case tt.stored != "" && (err != nil || got.GetLabels()["mutated"] != tt.stored):
				t.Errorf("stored labels %v (%v), want mutated=%s", got.GetLabels(), err, tt.stored)
			}
		})
	}
}

func TestAdmissionDenialStopsTheWrite(t *testing.T) {
	t.Parallel()
	for _, phase := range []string{"Mutate", "Validate"} {
		t.Run(phase, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t)
			if _, err := c.Create(cmGVR, "default", configMap("deny-existing", nil), memcluster.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			c.SetAdmission(&recordingHook{c: c, denyIn: phase})
			before := c.Writes()
			writes := map[string]func() error{
				"create": func() error {
					_, err := c.Create(cmGVR, "default", configMap("deny-new", nil), memcluster.WriteOptions{})
					return err
				},
				"update": func() error {
					_, err := c.Update(cmGVR, "default", configMap("deny-existing", map[string]string{"a": "b"}), memcluster.WriteOptions{})
					return err
				},
				"delete": func() error {
					_, err := c.Delete(cmGVR, "default", "deny-existing", memcluster.WriteOptions{})
					return err
				},
			}
			for name, write := range writes {
				if err := write(); !errors.Is(err, errDenied) {
					t.Errorf("%s: err = %v, want the hook's denial as it is", name, err)
				}
			}
			if c.Writes() != before {
				t.Errorf("%d writes after denials", c.Writes()-before)
			}
		})
	}
}

func TestAdmissionSeesStatusWritesAsSubresource(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	dep := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d", "namespace": "default"}, "spec": map[string]any{}}}
	created, err := c.Create(deployGVR, "default", dep, memcluster.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hook := &recordingHook{c: c}
	c.SetAdmission(hook)
	created.Object["status"] = map[string]any{"replicas": int64(1)}
	if _, err := c.Update(deployGVR, "default", created, memcluster.WriteOptions{Subresource: "status"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Mutate UPDATE d /status uid old", "Validate UPDATE d /status uid old"}
	if got := hook.taken(); !slices.Equal(got, want) {
		t.Errorf("hook calls = %q, want %q", got, want)
	}
}
