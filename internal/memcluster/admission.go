package memcluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Admission is what kube-apiserver's admission webhooks are to the cluster: a hook asked about
// every write, at the points where the API server calls its mutating and validating
// webhooks. The offline harness installs one that runs the scripts' mutate and validate; the
// cluster knows nothing of scripts.
//
// Mutate is asked first, with the object as the write made it (the request's body, a patch
// applied to the stored object, or an apply merged into it; managedFields updated), before
// the server's own defaults (name generation, uid, creationTimestamp, generation); what it
// returns is what the write stores. Validate is asked next, with the object the server would
// store, before it checks for an existing object (create) or a change (update). A hook denies
// by returning an error, which the write returns as it is: an *apierrors.StatusError shaped as
// the API server reports a webhook's denial. For DELETE both are asked with Object nil and
// OldObject the stored object, after the delete's preconditions.
//
// The hook is called on the writer's goroutine without the cluster's mutex, so it may read
// the cluster (Get, List, an informer), but while the write holds the cluster's write order:
// it must not write to the cluster, and no other write happens until it returns.
type Admission interface {
	Mutate(AdmissionRequest) (*unstructured.Unstructured, error)
	Validate(AdmissionRequest) error
}

// AdmissionRequest is one write as an admission webhook sees it. Object and OldObject are
// copies the hook owns.
type AdmissionRequest struct {
	Operation   string // CREATE, UPDATE or DELETE
	Resource    schema.GroupVersionResource
	Subresource string // "" or "status"
	Namespace   string
	Name        string // "" on a create with generateName, in Mutate
	Object      *unstructured.Unstructured
	OldObject   *unstructured.Unstructured
	DryRun      bool
	// Warn hands the writer a warning of the hook's (WriteOptions.Warn); never nil.
	Warn func(string)
}

// SetAdmission installs the admission hook asked about every later write; nil removes it.
func (c *Cluster) SetAdmission(a Admission) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.admission = a
}

// admitMutation asks the hook to mutate obj; called with wmu and mu held, it releases mu
// for the call (wmu keeps every other write out meanwhile).
func (c *Cluster) admitMutation(res *resource, op string, obj, old *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	if c.admission == nil {
		return obj, nil
	}
	req := c.admissionRequest(res, op, obj, old, opts)
	var out *unstructured.Unstructured
	var err error
	c.unlocked(func() { out, err = c.admission.Mutate(req) })
	if err != nil || op == "DELETE" {
		return nil, err
	}
	if out == nil {
		return obj, nil
	}
	return decodeBody(res, out)
}

// admitValidation asks the hook to validate obj; called with wmu and mu held, like
// admitMutation.
func (c *Cluster) admitValidation(res *resource, op string, obj, old *unstructured.Unstructured, opts WriteOptions) error {
	if c.admission == nil {
		return nil
	}
	req := c.admissionRequest(res, op, obj, old, opts)
	var err error
	c.unlocked(func() { err = c.admission.Validate(req) })
	return err
}

func (c *Cluster) admissionRequest(res *resource, op string, obj, old *unstructured.Unstructured, opts WriteOptions) AdmissionRequest {
	req := AdmissionRequest{Operation: op, Resource: res.gvr, Subresource: opts.Subresource, DryRun: opts.DryRun, Warn: opts.Warn}
	if req.Warn == nil {
		req.Warn = func(string) {}
	}
	for _, o := range []*unstructured.Unstructured{obj, old} {
		if o != nil {
			req.Namespace, req.Name = o.GetNamespace(), o.GetName()
			break
		}
	}
	if obj != nil {
		req.Object = obj.DeepCopy()
	}
	if old != nil {
		req.OldObject = old.DeepCopy()
	}
	return req
}

// unlocked runs f without mu, which the caller holds.
func (c *Cluster) unlocked(f func()) {
	c.mu.Unlock()
	defer c.mu.Lock()
	f()
}
