package dynamicinformer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/shardrange"
)

// Key identifies one shared informer. Namespace "" means all namespaces. A non-zero
// Partition caches only the objects whose hashed field falls in its slices: the list and
// every watch carry its shardSelector, and the informer drops what the API server sends
// outside it (partition.go).
type Key struct {
	GVR           schema.GroupVersionResource
	Namespace     string
	LabelSelector string
	FieldSelector string
	Partition     shardrange.Partition
}

// String renders the key for logs: "apps/v1/deployments ns=x l=app=web f=".
func (k Key) String() string {
	s := FormatGVR(k.GVR)
	if k.Namespace != "" {
		s += " namespace=" + k.Namespace
	}
	if k.LabelSelector != "" {
		s += " labels=" + k.LabelSelector
	}
	if k.FieldSelector != "" {
		s += " fields=" + k.FieldSelector
	}
	if !k.Partition.IsZero() {
		s += fmt.Sprintf(" shard=%s(%d/%d)", k.Partition.Field.Short(), k.Partition.Count(), shardrange.Slices)
	}
	return s
}

// FormatGVR renders a GVR in the --gvr spelling: "apps/v1/deployments", "v1/pods".
func FormatGVR(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Version + "/" + gvr.Resource
	}
	return gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
}
