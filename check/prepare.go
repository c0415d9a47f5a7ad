package check

import (
	"github.com/jsinformer/jsinformer/internal/memcluster"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the cluster holds before the scripts load.

// prepare creates the input's CRDs, so that scripts watching their resources load and their
// objects resolve, and the namespaces the input's objects name without the input declaring
// them, so that those objects can be created. Both are then checked like the other
// documents, without being stored again (admitOnly). A write that fails here is left for the
// document's own check to report.
func (r *run) prepare(docs []Document) {
	for _, d := range docs {
		if d.Object != nil && d.Object.GetKind() == "Namespace" && d.Object.GetAPIVersion() == "v1" {
			if _, dup := r.declared[d.Object.GetName()]; !dup {
				r.declared[d.Object.GetName()] = d
			}
		}
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		r.present[objectKey{gvr: memcluster.NamespacesGVR, name: ns}] = true
	}
	for _, d := range docs {
		if d.Object == nil {
			continue
		}
		if d.Object.GetKind() == "CustomResourceDefinition" && d.Object.GetAPIVersion() == "apiextensions.k8s.io/v1" {
			r.precreate(d.Object.DeepCopy())
		}
		if ns := d.Object.GetNamespace(); ns != "" {
			if _, ok := r.declared[ns]; !ok {
				r.precreate(namespace(ns))
			}
		}
	}
}

func namespace(name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	obj.SetName(name)
	return obj
}

// precreate stores obj, unless the cluster has it, and marks it present.
func (r *run) precreate(obj *unstructured.Unstructured) {
	res, err := r.cluster.ResourceFor(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		return
	}
	key := objectKey{gvr: res.GVR, name: obj.GetName()}
	if r.present[key] {
		return
	}
	if _, err := r.cluster.Create(res.GVR, "", obj, memcluster.WriteOptions{FieldManager: fieldManager}); err == nil {
		r.present[key] = true
	}
}
