package memcluster

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// decodeBody does what the server's decoder does to a request body: the kind and version
// default to the endpoint's; a body of another kind is refused; a built-in object goes
// through its Go type, as on the server, which drops unknown and null fields and writes the
// empty structs the type always has (status: {}); a Secret's stringData is merged into data;
// and the defaults scripts would notice are set.
func decodeBody(res *resource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj.GetAPIVersion() == "" {
		obj.SetAPIVersion(res.gvr.GroupVersion().String())
	}
	if obj.GetKind() == "" {
		obj.SetKind(res.kind)
	}
	if err := checkKind(res, obj); err != nil {
		return nil, err
	}
	out, err := roundTrip(res, obj)
	if err != nil {
		return nil, err
	}
	if isCore(res, "secrets") {
		mergeStringData(out)
	}
	decodeDefaults(res, out)
	return out, nil
}

// roundTrip converts a built-in object to its Go type and back; custom resources are kept
// as they are.
func roundTrip(res *resource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !scheme.Scheme.Recognizes(res.gvk()) {
		return obj, nil
	}
	typed, err := scheme.Scheme.New(res.gvk())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
			res.kind, res.gvr.Version, res.kind, err))
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// emptyObject is the live object a create starts from, as the server's field manager sees
// it: for a built-in kind, its Go type's zero value.
func emptyObject(res *resource) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(res.gvk())
	if out, err := roundTrip(res, u); err == nil {
		return out
	}
	return u
}

// checkKind rejects a body whose apiVersion/kind is not the resource's, as the server's
// decoder does.
func checkKind(res *resource, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	if gvk == res.gvk() {
		return nil
	}
	if gvk.GroupVersion() != res.gvr.GroupVersion() {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)",
			gvk.GroupVersion(), res.gvr.GroupVersion()))
	}
	group := res.gvr.Group
	if group == "" {
		group = "core"
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
		gvk.Kind, gvk.Version, res.kind, gvk.Version, gvk.Kind, strings.Split(group, ".")[0], res.kind))
}

func isCore(res *resource, name string) bool { return res.gvr.Group == "" && res.gvr.Resource == name }

// mergeStringData moves a Secret's write-only stringData into data, base64-encoded.
func mergeStringData(obj *unstructured.Unstructured) {
	sd, ok := obj.Object["stringData"].(map[string]any)
	delete(obj.Object, "stringData")
	if !ok || len(sd) == 0 {
		return
	}
	data, _ := obj.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		s, _ := v.(string)
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	obj.Object["data"] = data
}

// decodeDefaults are the defaults of built-in types that scripts notice and that the
// server's managedFields attribute to the writer: a Secret's type and a Namespace's name label.
func decodeDefaults(res *resource, obj *unstructured.Unstructured) {
	switch {
	case isCore(res, "secrets"):
		if t, _, _ := unstructured.NestedString(obj.Object, "type"); t == "" {
			obj.Object["type"] = "Opaque"
		}
	case res.gvr == NamespacesGVR && obj.GetName() != "":
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["kubernetes.io/metadata.name"] = obj.GetName()
		obj.SetLabels(labels)
	}
}

// internalError is the server's 500 for a storage error: no reason, the bare message.
func internalError(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: msg}}
}
