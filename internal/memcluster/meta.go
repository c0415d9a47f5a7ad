package memcluster

import (
	"fmt"
	"net/http"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules the generic registry of kube-apiserver applies to object metadata on create and
// update, and the few per-type rules scripts meet (status, generation, namespace lifecycle).
// Type-specific validation and defaulting are not reproduced (see doc.go).

// placeNamespace checks the object's namespace against the request's, fills it in when
// missing, and clears it for cluster-scoped resources.
func placeNamespace(res *resource, namespace string, obj *unstructured.Unstructured) error {
	if !res.namespaced {
		obj.SetNamespace("")
		return nil
	}
	switch ns := obj.GetNamespace(); {
	case ns == "":
		obj.SetNamespace(namespace)
	case ns != namespace:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// nameFunc is the name validation of a resource.
func nameFunc(res *resource) apivalidation.ValidateNameFunc {
	switch {
	case res.gvr == NamespacesGVR:
		return apivalidation.ValidateNamespaceName
	case res.gvr.Group == "" && res.gvr.Resource == "services":
		return apivalidation.NameIsDNS1035Label
	case res.gvr.Group == "rbac.authorization.k8s.io", res.gvr.Resource == "events":
		// Event names are "object.suffix": a generateName may end with the dot.
		return func(name string, _ bool) []string { return content.IsPathSegmentName(name) }
	}
	return apivalidation.NameIsDNSSubdomain
}

// invalid is the server's 422 for a list of field errors.
func invalid(res *resource, name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(res.gvk().GroupKind(), name, errs)
}

// prepareCreate fills in what the server sets on create, after the field manager has run,
// and validates the metadata. The resourceVersion is set by commit.
func (c *Cluster) prepareCreate(res *resource, obj *unstructured.Unstructured) error {
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(obj.GetGenerateName() + utilrand.String(5))
	}
	if errs := apivalidation.ValidateObjectMetaAccessor(obj, res.namespaced, nameFunc(res), field.NewPath("metadata")); len(errs) > 0 {
		return invalid(res, obj.GetName(), errs)
	}
	obj.SetUID(uuid.NewUUID())
	obj.SetCreationTimestamp(c.now())
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetGeneration(0)
	if tracksGeneration(res) {
		obj.SetGeneration(1)
	}
	if res.status { // create cannot set status; a built-in type keeps its empty struct
		delete(obj.Object, "status")
		if !res.custom {
			obj.Object["status"] = map[string]any{}
		}
	}
	if res.gvr == NamespacesGVR {
		decodeDefaults(res, obj) // a generated name gets its label now
		_ = unstructured.SetNestedStringSlice(obj.Object, []string{"kubernetes"}, "spec", "finalizers")
		_ = unstructured.SetNestedField(obj.Object, "Active", "status", "phase")
	}
	return nil
}

// tracksGeneration reports whether the server keeps metadata.generation for res: custom
// resources and the built-in types with a spec that controllers observe.
func tracksGeneration(res *resource) bool {
	if res.custom {
		return true
	}
	switch res.gvr.GroupResource().String() {
	case "deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps",
		"jobs.batch", "cronjobs.batch", "replicationcontrollers", "pods",
		"poddisruptionbudgets.policy", "customresourcedefinitions.apiextensions.k8s.io",
		"horizontalpodautoscalers.autoscaling", "networkpolicies.networking.k8s.io", "ingresses.networking.k8s.io":
		return true
	}
	return false
}

// prepareUpdate carries the fields only the server sets from old to obj and validates the
// change. With status, only the status changes; without, the status is kept when the
// resource has a status subresource.
func prepareUpdate(res *resource, old, obj *unstructured.Unstructured, status bool) (*unstructured.Unstructured, error) {
	if status {
		next := old.DeepCopy()
		if s, ok := obj.Object["status"]; ok {
			next.Object["status"] = s
		} else {
			delete(next.Object, "status")
		}
		next.SetManagedFields(obj.GetManagedFields())
		return next, nil
	}
	obj.SetUID(old.GetUID())
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	obj.SetDeletionTimestamp(old.GetDeletionTimestamp())
	obj.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	obj.SetGeneration(old.GetGeneration())
	obj.SetGenerateName(firstNonEmpty(obj.GetGenerateName(), old.GetGenerateName()))
	if res.status {
		if s, ok := old.Object["status"]; ok {
			obj.Object["status"] = s
		} else {
			delete(obj.Object, "status")
		}
	}
	if errs := apivalidation.ValidateObjectMetaAccessorUpdate(obj, old, field.NewPath("metadata")); len(errs) > 0 {
		return nil, invalid(res, obj.GetName(), errs)
	}
	if errs := apivalidation.ValidateObjectMetaAccessor(obj, res.namespaced, nameFunc(res), field.NewPath("metadata")); len(errs) > 0 {
		return nil, invalid(res, obj.GetName(), errs)
	}
	if tracksGeneration(res) && (specChanged(old, obj) || annotationsBumpGeneration(res, old, obj)) {
		obj.SetGeneration(old.GetGeneration() + 1)
	}
	return obj, nil
}

// specChanged reports a change outside metadata and status: what bumps metadata.generation.
func specChanged(old, obj *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		m := make(map[string]any, len(u.Object))
		for k, v := range u.Object {
			if k != "metadata" && k != "status" {
				m[k] = v
			}
		}
		return m
	}
	return !apiequality.Semantic.DeepEqual(strip(old), strip(obj))
}

// annotationsBumpGeneration: a Deployment's generation also counts annotation changes (a
// legacy of rollbacks).
func annotationsBumpGeneration(res *resource, old, obj *unstructured.Unstructured) bool {
	return res.gvr.GroupResource().String() == "deployments.apps" &&
		!apiequality.Semantic.DeepEqual(old.GetAnnotations(), obj.GetAnnotations())
}

// checkPrecondition is the optimistic concurrency check of updates and patches: a
// resourceVersion in the request must be the stored one.
func checkPrecondition(res *resource, old *unstructured.Unstructured, rv string) error {
	if rv == "" || rv == old.GetResourceVersion() {
		return nil
	}
	return conflict(res, old.GetName())
}

func conflict(res *resource, name string) error {
	return apierrors.NewConflict(res.groupResource(), name,
		fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
}

// checkNamespace is the NamespaceLifecycle admission plugin: new objects need an existing,
// active namespace. Called with mu held.
func (c *Cluster) checkNamespace(res *resource, obj *unstructured.Unstructured) error {
	if !res.namespaced {
		return nil
	}
	ns := c.stored(NamespacesGVR, "", obj.GetNamespace())
	if ns == nil {
		return apierrors.NewNotFound(NamespacesGVR.GroupResource(), obj.GetNamespace())
	}
	if ns.GetDeletionTimestamp() != nil {
		err := apierrors.NewForbidden(res.groupResource(), obj.GetName(), fmt.Errorf(
			"unable to create new content in namespace %s because it is being terminated", obj.GetNamespace()))
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: "NamespaceTerminating",
			Message: fmt.Sprintf("namespace %s is being terminated", obj.GetNamespace()), Field: "metadata.namespace"}}
		return err
	}
	return nil
}

// notServed is the answer for a resource the cluster does not serve.
func notServed() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
		Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{}}}
}

// checkVerb rejects a verb the resource does not support, as the server's 405.
func checkVerb(res *resource, verb string) error {
	for _, v := range res.verbs {
		if v == verb {
			return nil
		}
	}
	return apierrors.NewMethodNotSupported(res.groupResource(), strings.ToLower(verb))
}
