package dynamicinformer

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Key identifies one shared informer. Namespace "" means all namespaces.
type Key struct {
	GVR           schema.GroupVersionResource
	Namespace     string
	LabelSelector string
	FieldSelector string
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
	return s
}

// FormatGVR renders a GVR in the --gvr spelling: "apps/v1/deployments", "v1/pods".
func FormatGVR(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Version + "/" + gvr.Resource
	}
	return gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
}
