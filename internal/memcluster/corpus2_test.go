package memcluster_test

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

var jsonMarshal = json.Marshal

func deployment(s *side, name string, replicas int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(deploymentJSON(s, name, `[{"name":"main","image":"nginx:1"}]`, replicas))); err != nil {
		panic(err)
	}
	return u
}

func statusSteps() []step {
	return []step{
		{"create drops status", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u, err := s.ri(deployGVR).Create(ctx, deployment(s, "api", 1), manager("corpus"))
			return save(s, "api", u, err)
		}},
		{"update ignores status and bumps generation", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := s.saved["api"].DeepCopy()
			_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
			_ = unstructured.SetNestedField(u.Object, int64(9), "status", "replicas")
			u, err := s.ri(deployGVR).Update(ctx, u, metav1.UpdateOptions{FieldManager: "corpus"})
			return save(s, "api", u, err)
		}},
		{"metadata change keeps generation", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"metadata":{"annotations":{"note":"x"}}}`
			u, err := s.ri(deployGVR).Patch(ctx, "api", types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "corpus"})
			return save(s, "api", u, err)
		}},
		{"updateStatus changes only status", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := s.saved["api"].DeepCopy()
			_ = unstructured.SetNestedField(u.Object, int64(3), "status", "replicas")
			_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
			u, err := s.ri(deployGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: "status-writer"})
			return save(s, "api", u, err)
		}},
		{"updateStatus with a stale resourceVersion", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := s.saved["api"].DeepCopy()
			u.SetResourceVersion("3")
			return s.ri(deployGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: "status-writer"})
		}},
		{"patchStatus", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"status":{"readyReplicas":2},"spec":{"replicas":8}}`
			return s.ri(deployGVR).Patch(ctx, "api", types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "status-writer"}, "status")
		}},
		{"apply status", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api"},"status":{"availableReplicas":1}}`
			return s.ri(deployGVR).Patch(ctx, "api", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "status-applier"}, "status")
		}},
		{"status of a resource without one", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(cmGVR).Patch(ctx, "cm1", types.MergePatchType, []byte(`{"status":{"x":1}}`), metav1.PatchOptions{FieldManager: "x"}, "status")
		}},
	}
}

func deleteSteps() []step {
	return []step{
		{"create with a finalizer", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "held", map[string]any{"a": "1"})
			u.SetFinalizers([]string{"example.com/hold"})
			u.SetLabels(map[string]string{"watched": "yes"})
			return s.ri(cmGVR).Create(ctx, u, manager("corpus"))
		}},
		{"delete with a finalizer marks it", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			if err := s.ri(cmGVR).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
				return nil, err
			}
			u, err := s.ri(cmGVR).Get(ctx, "held", metav1.GetOptions{})
			return save(s, "held", u, err)
		}},
		{"delete again changes nothing", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			if err := s.ri(cmGVR).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
				return nil, err
			}
			return s.ri(cmGVR).Get(ctx, "held", metav1.GetOptions{})
		}},
		{"adding a finalizer while deleting", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}`
			return s.ri(cmGVR).Patch(ctx, "held", types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "x"})
		}},
		{"removing the last finalizer deletes", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"metadata":{"finalizers":null}}`
			if _, err := s.ri(cmGVR).Patch(ctx, "held", types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "x"}); err != nil {
				return nil, err
			}
			return s.ri(cmGVR).Get(ctx, "held", metav1.GetOptions{})
		}},
		{"delete in the foreground", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			fg := metav1.DeletePropagationForeground
			if err := s.ri(deployGVR).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
				return nil, err
			}
			return s.ri(deployGVR).Get(ctx, "web", metav1.GetOptions{})
		}},
		{"delete", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			if err := s.ri(cmGVR).Delete(ctx, "cm2", metav1.DeleteOptions{}); err != nil {
				return nil, err
			}
			return s.ri(cmGVR).Get(ctx, "cm2", metav1.GetOptions{})
		}},
		{"delete missing", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return nil, s.ri(cmGVR).Delete(ctx, "cm2", metav1.DeleteOptions{})
		}},
		{"delete with a stale precondition", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			rv := "1"
			return nil, s.ri(cmGVR).Delete(ctx, "cm1", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		}},
		{"delete a namespace", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			name := s.ns + "-doomed"
			if _, err := s.dyn.Resource(nsGVR).Create(ctx, obj("v1", "Namespace", "", name, nil), manager("corpus")); err != nil {
				return nil, err
			}
			if err := s.dyn.Resource(nsGVR).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				return nil, err
			}
			u, err := s.dyn.Resource(nsGVR).Get(ctx, name, metav1.GetOptions{})
			if u != nil { // the namespace controller would remove its finalizer; there is none
				unstructured.RemoveNestedField(u.Object, "status", "conditions")
			}
			return u, err
		}},
		{"create in a terminating namespace", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := cm(s, "late", nil)
			u.SetNamespace(s.ns + "-doomed")
			return s.dyn.Resource(cmGVR).Namespace(s.ns+"-doomed").Create(ctx, u, manager("corpus"))
		}},
	}
}

func gadget(s *side, name string, rest map[string]any) *unstructured.Unstructured {
	return obj(s.group+"/v1", "Gadget", s.ns, name, rest)
}

func customSteps() []step {
	return []step{
		{"create a custom resource drops status", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			u := gadget(s, "g1", map[string]any{"spec": map[string]any{"size": int64(1)}, "status": map[string]any{"ok": true}})
			return s.ri(s.gadgets()).Create(ctx, u, manager("corpus"))
		}},
		{"custom resource spec change bumps generation", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(s.gadgets()).Patch(ctx, "g1", types.MergePatchType, []byte(`{"spec":{"size":2}}`), metav1.PatchOptions{FieldManager: "corpus"})
		}},
		{"custom resource label change keeps generation", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(s.gadgets()).Patch(ctx, "g1", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{FieldManager: "corpus"})
		}},
		{"custom resource strategic merge patch", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return s.ri(s.gadgets()).Patch(ctx, "g1", types.StrategicMergePatchType, []byte(`{"spec":{"size":3}}`), metav1.PatchOptions{FieldManager: "corpus"})
		}},
		{"custom resource status patch", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"status":{"phase":"Ready"},"spec":{"size":100}}`
			return s.ri(s.gadgets()).Patch(ctx, "g1", types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "ctrl"}, "status")
		}},
		{"custom resource apply", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"apiVersion":"` + s.group + `/v1","kind":"Gadget","metadata":{"name":"g2"},"spec":{"parts":["a","b"],"opts":{"x":1}}}`
			return s.ri(s.gadgets()).Patch(ctx, "g2", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "alice"})
		}},
		{"custom resource apply by another manager", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			body := `{"apiVersion":"` + s.group + `/v1","kind":"Gadget","metadata":{"name":"g2"},"spec":{"opts":{"y":2}}}`
			return s.ri(s.gadgets()).Patch(ctx, "g2", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "bob"})
		}},
	}
}

func listSteps() []step {
	list := func(ctx context.Context, s *side, opts metav1.ListOptions) (*unstructured.Unstructured, error) {
		l, err := s.ri(cmGVR).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		names := []any{}
		for _, item := range l.Items {
			names = append(names, item.GetName())
		}
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{}, "names": names}}, nil
	}
	return []step{
		{"list by label", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return list(ctx, s, metav1.ListOptions{LabelSelector: "tier=web"})
		}},
		{"list by set-based label", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return list(ctx, s, metav1.ListOptions{LabelSelector: "!tier"})
		}},
		{"list by name", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return list(ctx, s, metav1.ListOptions{FieldSelector: "metadata.name=cm1"})
		}},
		{"list by an unsupported field", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return list(ctx, s, metav1.ListOptions{FieldSelector: "data.a=1"})
		}},
		{"list with a bad label selector", func(ctx context.Context, s *side) (*unstructured.Unstructured, error) {
			return list(ctx, s, metav1.ListOptions{LabelSelector: "a in (b"})
		}},
	}
}
