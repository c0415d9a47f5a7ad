package memcluster

import (
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WriteOptions are the options of a write, as the API's query parameters carry them.
type WriteOptions struct {
	// DryRun validates and returns the result without storing it (dryRun=All).
	DryRun bool
	// FieldManager names the writer in managedFields; required for apply.
	FieldManager string
	// Force takes over conflicting fields in an apply.
	Force bool
	// Subresource is "" or "status".
	Subresource string
	// PropagationPolicy of a delete; nil is the resource's default (Background).
	PropagationPolicy *metav1.DeletionPropagation
	// Preconditions of a delete.
	Preconditions *metav1.Preconditions
	// Warn, when set, is told each warning the admission hook answers the write with, as
	// kube-apiserver hands a client its webhooks' warnings (Warning headers); on the writer's
	// goroutine, before the write returns.
	Warn func(string)
}

// defaultManager is the field manager of requests that name none; the server derives it
// from the client's user agent.
const defaultManager = "memcluster"

// served returns the resource at gvr that supports verb.
func (c *Cluster) served(gvr schema.GroupVersionResource, verb string) (*resource, error) {
	res := c.reg.lookup(gvr)
	if res == nil {
		return nil, notServed()
	}
	return res, checkVerb(res, verb)
}

// Create stores a new object (POST). The result is the stored object, a copy.
func (c *Cluster) Create(gvr schema.GroupVersionResource, namespace string, obj *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	res, err := c.served(gvr, "create")
	if err != nil {
		return nil, err
	}
	if opts.Subresource != "" {
		return nil, apierrors.NewMethodNotSupported(res.groupResource(), "create "+opts.Subresource)
	}
	if obj.GetResourceVersion() != "" {
		return nil, internalError("resourceVersion should not be set on objects to be created")
	}
	if obj, err = c.decode(res, namespace, obj); err != nil {
		return nil, err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	m, err := c.fields.get(res, "")
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	managed, err := m.Update(emptyObject(res), obj, firstNonEmpty(opts.FieldManager, defaultManager))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return c.insert(res, managed.(*unstructured.Unstructured), opts)
}

// decode normalizes and decodes a request body and places it in the request's namespace.
func (c *Cluster) decode(res *resource, namespace string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj, err := normalize(obj)
	if err != nil {
		return nil, err
	}
	if obj, err = decodeBody(res, obj); err != nil {
		return nil, err
	}
	return obj, placeNamespace(res, namespace, obj)
}

// insert admits, prepares and stores a new object whose managed fields are set; called
// with wmu and mu held.
func (c *Cluster) insert(res *resource, obj *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	obj, err := c.admitMutation(res, "CREATE", obj, nil, opts)
	if err != nil {
		return nil, err
	}
	if err := c.prepareCreate(res, obj); err != nil {
		return nil, err
	}
	if err := c.checkNamespace(res, obj); err != nil {
		return nil, err
	}
	if err := c.admitValidation(res, "CREATE", obj, nil, opts); err != nil {
		return nil, err
	}
	if c.stored(res.gvr, obj.GetNamespace(), obj.GetName()) != nil {
		return nil, apierrors.NewAlreadyExists(res.groupResource(), obj.GetName())
	}
	if opts.DryRun {
		return obj.DeepCopy(), nil
	}
	return c.commit(res, nil, obj).DeepCopy(), nil
}

// Update replaces an object (PUT), or its status with Subresource "status".
func (c *Cluster) Update(gvr schema.GroupVersionResource, namespace string, obj *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	res, err := c.served(gvr, "update")
	if err != nil {
		return nil, err
	}
	if err := checkSubresource(res, opts.Subresource); err != nil {
		return nil, err
	}
	if obj, err = c.decode(res, namespace, obj); err != nil {
		return nil, err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.stored(res.gvr, obj.GetNamespace(), obj.GetName())
	if old == nil {
		return nil, apierrors.NewNotFound(res.groupResource(), obj.GetName())
	}
	if err := checkPrecondition(res, old, obj.GetResourceVersion()); err != nil {
		return nil, err
	}
	return c.replace(res, old, obj, opts)
}

// checkSubresource accepts "" and, where the resource has one, "status".
func checkSubresource(res *resource, sub string) error {
	if sub == "" || (sub == "status" && res.status) {
		return nil
	}
	return notServed()
}

// replace stores obj as the new state of old after the update rules, recording managed
// fields for the writer; called with mu held.
func (c *Cluster) replace(res *resource, old, obj *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	status := opts.Subresource == "status"
	m, err := c.fields.get(res, opts.Subresource)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	obj.SetResourceVersion(old.GetResourceVersion())
	if status {
		obj.SetManagedFields(old.GetManagedFields()) // the status endpoint tracks, it does not take
	}
	managed, err := m.Update(old, obj, firstNonEmpty(opts.FieldManager, defaultManager))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return c.store(res, old, managed.(*unstructured.Unstructured), opts)
}

// store finishes a write to an existing object: admission, the update rules, the no-op
// check, and the end of a deletion whose finalizers are gone; called with wmu and mu held.
func (c *Cluster) store(res *resource, old, next *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	next, err := c.admitMutation(res, "UPDATE", next, old, opts)
	if err != nil {
		return nil, err
	}
	if next, err = prepareUpdate(res, old, next, opts.Subresource == "status"); err != nil {
		return nil, err
	}
	if err := checkFinalizers(res, old, next); err != nil {
		return nil, err
	}
	if err := c.admitValidation(res, "UPDATE", next, old, opts); err != nil {
		return nil, err
	}
	next.SetResourceVersion(old.GetResourceVersion())
	if apiequality.Semantic.DeepEqual(old.Object, next.Object) {
		return old.DeepCopy(), nil // the server writes nothing and sends no event
	}
	if opts.DryRun {
		return next, nil
	}
	if next.GetDeletionTimestamp() != nil && len(next.GetFinalizers()) == 0 && !namespaceHeld(res, next) {
		c.commit(res, old, nil)
		return next, nil
	}
	return c.commit(res, old, next).DeepCopy(), nil
}

// checkFinalizers refuses new finalizers on an object being deleted.
func checkFinalizers(res *resource, old, next *unstructured.Unstructured) error {
	if old.GetDeletionTimestamp() == nil {
		return nil
	}
	had := map[string]bool{}
	for _, f := range old.GetFinalizers() {
		had[f] = true
	}
	for _, f := range next.GetFinalizers() {
		if !had[f] {
			return invalid(res, next.GetName(), fieldErrors("metadata.finalizers",
				fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers []string{%q}", f)))
		}
	}
	return nil
}

// namespaceHeld reports a Namespace that its spec.finalizers keep: without the namespace
// controller (there is none, as on a bare control plane) it stays Terminating.
func namespaceHeld(res *resource, obj *unstructured.Unstructured) bool {
	if res.gvr != NamespacesGVR {
		return false
	}
	f, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "finalizers")
	return len(f) > 0
}
