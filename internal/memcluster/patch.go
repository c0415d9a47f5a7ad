package memcluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Patch changes an object (PATCH) with a JSON merge, JSON, strategic merge or apply patch,
// using the same libraries as kube-apiserver: evanphx/json-patch, apimachinery's
// strategicpatch, and structured-merge-diff through the field manager for apply.
func (c *Cluster) Patch(gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte, opts WriteOptions) (*unstructured.Unstructured, error) {
	res, err := c.served(gvr, "patch")
	if err != nil {
		return nil, err
	}
	if err := checkSubresource(res, opts.Subresource); err != nil {
		return nil, err
	}
	if !res.namespaced {
		namespace = ""
	}
	if pt == types.ApplyPatchType {
		return c.apply(res, namespace, name, data, opts)
	}
	if pt == types.StrategicMergePatchType && !scheme.Scheme.Recognizes(res.gvk()) {
		return nil, unsupportedPatch()
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.stored(res.gvr, namespace, name)
	if old == nil {
		return nil, apierrors.NewNotFound(res.groupResource(), name)
	}
	patched, err := patchJSON(res, old, pt, data)
	if err != nil {
		return nil, err
	}
	if patched.GetName() != name || patched.GetNamespace() != namespace {
		return nil, apierrors.NewBadRequest("the name of the object does not match the name on the URL")
	}
	if err := checkPrecondition(res, old, patched.GetResourceVersion()); err != nil {
		return nil, err
	}
	return c.replace(res, old, patched, opts)
}

// patchJSON applies a non-apply patch to the stored object's JSON.
func patchJSON(res *resource, old *unstructured.Unstructured, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	original, err := json.Marshal(old.Object)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var out []byte
	switch pt {
	case types.MergePatchType:
		if !json.Valid(data) {
			return nil, apierrors.NewBadRequest("invalid JSON patch")
		}
		out, err = jsonpatch.MergePatch(original, data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.JSONPatchType:
		out, err = applyJSONPatch(original, data)
	case types.StrategicMergePatchType:
		out, err = strategicMerge(res, original, data)
	default:
		return nil, unsupportedPatch()
	}
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(out); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return decodeBody(res, obj)
}

func applyJSONPatch(original, data []byte) ([]byte, error) {
	p, err := jsonpatch.DecodePatch(data)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	out, err := p.Apply(original)
	if err != nil {
		return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return out, nil
}

func strategicMerge(res *resource, original, data []byte) ([]byte, error) {
	typed, err := scheme.Scheme.New(res.gvk())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var patch map[string]any
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	out, err := strategicpatch.StrategicMergePatch(original, data, typed)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return out, nil
}

func unsupportedPatch() error {
	return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", schema.GroupResource{}, "",
		"the body of the request was in an unknown format - accepted media types include: "+
			"application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", 0, false)
}

// apply is server-side apply: the field manager merges the applied configuration into the
// live object (or an empty one, creating it) and reports conflicts with other managers.
func (c *Cluster) apply(res *resource, namespace, name string, data []byte, opts WriteOptions) (*unstructured.Unstructured, error) {
	if opts.FieldManager == "" {
		return nil, invalidApply(field.Required(field.NewPath("fieldManager"), "is required for apply patch"))
	}
	applied, err := decodeApplied(res, namespace, name, data)
	if err != nil {
		return nil, err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.stored(res.gvr, namespace, name)
	if old == nil && opts.Subresource != "" {
		return nil, apierrors.NewNotFound(res.groupResource(), name)
	}
	next, err := c.merge(res, old, applied, opts)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return c.applyCreate(res, namespace, name, next, opts)
	}
	if err := checkPrecondition(res, old, applied.GetResourceVersion()); err != nil {
		return nil, err
	}
	return c.store(res, old, next, opts)
}

// decodeApplied reads an applied configuration and checks it names the request's object.
func decodeApplied(res *resource, namespace, name string, data []byte) (*unstructured.Unstructured, error) {
	applied := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(data, &applied.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	applied, err := normalize(applied)
	if err != nil {
		return nil, err
	}
	if err := checkApplied(res, namespace, name, applied); err != nil {
		return nil, err
	}
	applied.SetName(name)
	if res.namespaced {
		applied.SetNamespace(namespace)
	}
	return applied, nil
}

// merge runs the field manager's apply of applied onto old (nil: nothing yet); called with
// mu held.
func (c *Cluster) merge(res *resource, old, applied *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	m, err := c.fields.get(res, opts.Subresource)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	live := old
	if live == nil { // nothing at all, not even a type's empty fields, for apply to own
		empty, _ := unstructuredCreater{}.New(res.gvk())
		live = empty.(*unstructured.Unstructured)
	}
	result, err := m.Apply(live, applied, opts.FieldManager, opts.Force)
	if err != nil {
		return nil, err
	}
	return decodeBody(res, result.(*unstructured.Unstructured))
}

// applyCreate stores the result of an apply to an object that did not exist; called with mu
// held.
func (c *Cluster) applyCreate(res *resource, namespace, name string, next *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	next.SetNamespace(namespace)
	next.SetName(name)
	return c.insert(res, next, opts)
}

// checkApplied validates an applied configuration's identity against the request.
func checkApplied(res *resource, namespace, name string, applied *unstructured.Unstructured) error {
	if applied.GetAPIVersion() == "" || applied.GetKind() == "" {
		return apierrors.NewBadRequest("error decoding YAML: Object 'Kind' is missing in applied configuration")
	}
	if err := checkKind(res, applied); err != nil {
		return err
	}
	if applied.GetName() != "" && applied.GetName() != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", applied.GetName(), name))
	}
	if res.namespaced && applied.GetNamespace() != "" && applied.GetNamespace() != namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

func invalidApply(errs ...*field.Error) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "", errs)
}

func fieldErrors(path, detail string) field.ErrorList {
	return field.ErrorList{field.Forbidden(field.NewPath(strings.Split(path, ".")[0], strings.Split(path, ".")[1:]...), detail)}
}
