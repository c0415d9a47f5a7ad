package memcluster

import (
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Delete deletes an object. An object with finalizers (or deleted with the Foreground or
// Orphan policy, whose finalizers the garbage collector would remove) is only marked: it
// gets a deletionTimestamp and stays until its finalizers are removed; Delete then returns
// it. A Namespace stays Terminating, as on a control plane without the namespace
// controller. Otherwise the object is gone and Delete returns nil.
func (c *Cluster) Delete(gvr schema.GroupVersionResource, namespace, name string, opts WriteOptions) (*unstructured.Unstructured, error) {
	res, err := c.served(gvr, "delete")
	if err != nil {
		return nil, err
	}
	if !res.namespaced {
		namespace = ""
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.stored(gvr, namespace, name)
	if old == nil {
		return nil, apierrors.NewNotFound(res.groupResource(), name)
	}
	if err := checkDeletePreconditions(res, old, opts.Preconditions); err != nil {
		return nil, err
	}
	if _, err := c.admitMutation(res, "DELETE", nil, old, opts); err != nil {
		return nil, err
	}
	if err := c.admitValidation(res, "DELETE", nil, old, opts); err != nil {
		return nil, err
	}
	next := old.DeepCopy()
	addPropagationFinalizer(next, opts.PropagationPolicy)
	if len(next.GetFinalizers()) == 0 && !namespaceHeld(res, next) {
		if !opts.DryRun {
			c.commit(res, old, nil)
		}
		return nil, nil
	}
	if next.GetDeletionTimestamp() == nil {
		c.markDeleted(res, next)
	}
	if opts.DryRun {
		return next, nil
	}
	if apiequality.Semantic.DeepEqual(old.Object, next.Object) {
		return old.DeepCopy(), nil
	}
	return c.commit(res, old, next).DeepCopy(), nil
}

// markDeleted starts a graceful deletion: a deletionTimestamp (and a zero grace period but
// for Namespaces, which become Terminating), and a new generation where there is one.
func (c *Cluster) markDeleted(res *resource, obj *unstructured.Unstructured) {
	now := c.now()
	obj.SetDeletionTimestamp(&now)
	if res.gvr == NamespacesGVR {
		_ = unstructured.SetNestedField(obj.Object, "Terminating", "status", "phase")
		return
	}
	zero := int64(0)
	obj.SetDeletionGracePeriodSeconds(&zero)
	if g := obj.GetGeneration(); g > 0 {
		obj.SetGeneration(g + 1)
	}
}

// addPropagationFinalizer adds the finalizer the garbage collector acts on for the policy.
func addPropagationFinalizer(obj *unstructured.Unstructured, policy *metav1.DeletionPropagation) {
	if policy == nil {
		return
	}
	var f string
	switch *policy {
	case metav1.DeletePropagationForeground:
		f = metav1.FinalizerDeleteDependents
	case metav1.DeletePropagationOrphan:
		f = metav1.FinalizerOrphanDependents
	default:
		return
	}
	if fs := obj.GetFinalizers(); !slices.Contains(fs, f) {
		obj.SetFinalizers(append(fs, f))
	}
}

func checkDeletePreconditions(res *resource, obj *unstructured.Unstructured, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	// The storage layer names the kind, not the resource, in these messages.
	gr := schema.GroupResource{Group: res.gvr.Group, Resource: res.kind}
	if pre.UID != nil && *pre.UID != obj.GetUID() {
		return apierrors.NewConflict(gr, obj.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been modified", *pre.UID, obj.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != obj.GetResourceVersion() {
		return apierrors.NewConflict(gr, obj.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			*pre.ResourceVersion, obj.GetResourceVersion()))
	}
	return nil
}
