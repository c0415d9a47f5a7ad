package dynamicinformer

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// StripManagedFields drops metadata.managedFields, which is often half of an object's size
// and of no use to handlers. It is the transform of every informer the Factory starts.
func StripManagedFields(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if meta, ok := u.Object["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
	}
	return obj, nil
}
