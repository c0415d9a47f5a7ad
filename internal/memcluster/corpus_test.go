package memcluster_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The corpus: what scripts do, in order; later steps read what earlier ones saved.

func corpus() []step {
	var steps []step
	for _, group := range [][]step{createSteps(), updateSteps(), patchSteps(), applySteps(),
		statusSteps(), deleteSteps(), customSteps(), listSteps()} {
		steps = append(steps, group...)
	}
	return steps
}

func manager(name string) metav1.CreateOptions { return metav1.CreateOptions{FieldManager: name} }

func save(s *side, key string, u *unstructured.Unstructured, err error) (*unstructured.Unstructured, error) {
	if err == nil && u != nil {
		s.saved[key] = u
	}
	return u, err
}

func createSteps() []step {
	return []step{
		{"create", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u, err := s.ri(cmGVR).Create(ctx, cm(s, "cm1", map[string]any{"a": "1"}), manager("corpus"))
			return save(s, "cm1", u, err)
		}},
		{"create existing", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, cm(s, "cm1", nil), manager("corpus"))
		}},
		{"create with generateName", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "", map[string]any{"g": "1"})
			u.SetGenerateName("gen-")
			return s.ri(cmGVR).Create(ctx, u, manager("corpus"))
		}},
		{"create with a generateName ending in a dot", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "", nil)
			u.SetGenerateName("gen.")
			return s.ri(cmGVR).Create(ctx, u, manager("corpus"))
		}},
		{"create an event with a generateName ending in a dot", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := obj("v1", "Event", s.ns, "", map[string]any{"involvedObject": map[string]any{"kind": "ConfigMap", "name": "cm1", "namespace": s.ns},
				"reason": "Seen", "message": "m", "type": "Normal", "source": map[string]any{"component": "x"},
				"firstTimestamp": "2030-01-01T00:00:00Z", "lastTimestamp": "2030-01-01T00:00:00Z", "count": int64(1)})
			u.SetGenerateName("cm1.")
			return s.ri(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Create(ctx, u, manager("corpus"))
		}},
		{"create without name", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, cm(s, "", nil), manager("corpus"))
		}},
		{"create with an invalid name", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, cm(s, "Bad_Name", nil), manager("corpus"))
		}},
		{"create with a resourceVersion", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "with-rv", nil)
			u.SetResourceVersion("5")
			return s.ri(cmGVR).Create(ctx, u, manager("corpus"))
		}},
		{"create in a missing namespace", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "lost", nil)
			u.SetNamespace(s.ns + "-missing")
			return s.dyn.Resource(cmGVR).Namespace(s.ns+"-missing").Create(ctx, u, manager("corpus"))
		}},
		{"create in another namespace than the request's", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "elsewhere", nil)
			u.SetNamespace("default")
			return s.ri(cmGVR).Create(ctx, u, manager("corpus"))
		}},
		{"create with the wrong kind", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Create(ctx, obj("v1", "Secret", s.ns, "wrong-kind", nil), manager("corpus"))
		}},
		{"create a secret with stringData", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := obj("v1", "Secret", s.ns, "token", map[string]any{"stringData": map[string]any{"token": "s3cr3t"}})
			return s.ri(secretGVR).Create(ctx, u, manager("corpus"))
		}},
		{"get missing", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Get(ctx, "nope", metav1.GetOptions{})
		}},
	}
}

func updateSteps() []step {
	return []step{
		{"update with a stale resourceVersion", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := s.saved["cm1"].DeepCopy()
			u.SetResourceVersion("1")
			return s.ri(cmGVR).Update(ctx, u, metav1.UpdateOptions{FieldManager: "corpus"})
		}},
		{"update without a resourceVersion", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "cm1", map[string]any{"a": "1", "b": "2"})
			u.SetLabels(map[string]string{"watched": "yes"})
			u, err := s.ri(cmGVR).Update(ctx, u, metav1.UpdateOptions{FieldManager: "corpus"})
			return save(s, "cm1", u, err)
		}},
		{"update with the current resourceVersion", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := s.saved["cm1"].DeepCopy()
			_ = unstructured.SetNestedField(u.Object, "3", "data", "c")
			u, err := s.ri(cmGVR).Update(ctx, u, metav1.UpdateOptions{FieldManager: "other"})
			return save(s, "cm1", u, err)
		}},
		{"update that changes nothing", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u, err := s.ri(cmGVR).Update(ctx, s.saved["cm1"].DeepCopy(), metav1.UpdateOptions{FieldManager: "other"})
			if err == nil && u.GetResourceVersion() != s.saved["cm1"].GetResourceVersion() {
				return nil, fmt.Errorf("a no-op update changed the resourceVersion")
			}
			return u, err
		}},
		{"update missing", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Update(ctx, cm(s, "nope", nil), metav1.UpdateOptions{FieldManager: "corpus"})
		}},
		{"update without kind (client-side)", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "cm1", nil)
			delete(u.Object, "kind")
			return s.ri(cmGVR).Update(ctx, u, metav1.UpdateOptions{FieldManager: "corpus"})
		}},
	}
}

func patch(ctx context.Context, s *side, name string, pt types.PatchType, body string) (*unstructured.Unstructured, error) {
	return s.ri(cmGVR).Patch(ctx, name, pt, []byte(body), metav1.PatchOptions{FieldManager: "patcher"})
}

func patchSteps() []step {
	return []step{
		{"merge patch", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "cm1", types.MergePatchType, `{"data":{"a":null,"d":"4"}}`)
		}},
		{"merge patch with a stale resourceVersion", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "cm1", types.MergePatchType, `{"metadata":{"resourceVersion":"2"},"data":{"x":"1"}}`)
		}},
		{"merge patch that removes the watched label", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "cm1", types.MergePatchType, `{"metadata":{"labels":{"watched":null}}}`)
		}},
		{"json patch", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "cm1", types.JSONPatchType, `[{"op":"add","path":"/data/e","value":"5"},{"op":"replace","path":"/data/b","value":"two"}]`)
		}},
		{"json patch whose test fails", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "cm1", types.JSONPatchType, `[{"op":"test","path":"/data/b","value":"2"}]`)
		}},
		{"json patch of a missing path", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "cm1", types.JSONPatchType, `[{"op":"replace","path":"/data/zz","value":"1"}]`)
		}},
		{"strategic merge patch", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "cm1", types.StrategicMergePatchType, `{"metadata":{"labels":{"watched":"yes","tier":"web"}}}`)
		}},
		{"patch missing", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "nope", types.MergePatchType, `{"data":{"a":"1"}}`)
		}},
		{"merge patch that is not JSON", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return patch(ctx, s, "cm1", types.MergePatchType, `{"data":`)
		}},
	}
}

func apply(ctx context.Context, s *side, name, fieldManager string, force bool, data map[string]any) (*unstructured.Unstructured, error) {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"watched":"yes"}},"data":%s}`, name, toJSON(data))
	return s.ri(cmGVR).Patch(ctx, name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
}

func applySteps() []step {
	return []step{
		{"apply creates", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return apply(ctx, s, "cm2", "alice", false, map[string]any{"owner": "alice", "shared": "a"})
		}},
		{"apply conflicting with another manager", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return apply(ctx, s, "cm2", "bob", false, map[string]any{"shared": "b"})
		}},
		{"apply with force", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return apply(ctx, s, "cm2", "bob", true, map[string]any{"shared": "b", "mine": "bob"})
		}},
		{"apply that drops an owned field", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return apply(ctx, s, "cm2", "alice", false, map[string]any{})
		}},
		{"apply without a field manager", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm2"}}`
			return s.ri(cmGVR).Patch(ctx, "cm2", types.ApplyPatchType, []byte(body), metav1.PatchOptions{})
		}},
		{"apply with another name", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`
			return s.ri(cmGVR).Patch(ctx, "cm2", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "alice"})
		}},
		{"apply a deployment", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := deploymentJSON(s, "web", `[{"name":"main","image":"nginx:1"},{"name":"side","image":"busybox"}]`, 1)
			return s.ri(deployGVR).Patch(ctx, "web", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "alice"})
		}},
		{"apply a container by a second manager (lists merge by key)", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
			"spec":{"template":{"spec":{"containers":[{"name":"extra","image":"extra:1"}]}}}}`
			return s.ri(deployGVR).Patch(ctx, "web", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "bob"})
		}},
		{"strategic merge patch of a container", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}}}`
			u, err := s.ri(deployGVR).Patch(ctx, "web", types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "carol"})
			return save(s, "web", u, err)
		}},
	}
}

func deploymentJSON(s *side, name, containers string, replicas int) string {
	return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q,"labels":{"app":%q}},
	"spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},
	"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":%s}}},"status":{"replicas":7}}`,
		name, s.ns, name, replicas, name, name, containers)
}

func toJSON(v any) string {
	data, err := jsonMarshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}
