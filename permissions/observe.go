package permissions

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/jsinformer/jsinformer/scripting"
)

// Observe wraps a script's client: after each call, observe is told the permission the call
// used (Why is the k8s method, "k8s.patch") and its error. It is how the runner records the
// calls the API server refuses and how `runner test --permissions` learns what tests used.
// observe runs on the calling goroutine.
func Observe(c scripting.Client, script string, r Resolver, observe func(Need, error)) scripting.Client {
	return &observed{Client: c, script: script, r: r, observe: observe}
}

type observed struct {
	scripting.Client
	script  string
	r       Resolver
	observe func(Need, error)
}

func (o *observed) note(err error, method, verb, resource, sub, namespace string) {
	n := Need{Script: o.script, Verb: verb, Namespace: namespace, Why: "k8s." + method}
	if res, rerr := o.r.Resolve(resource); rerr == nil {
		n.Group, n.Resource = res.GVR.Group, res.GVR.Resource
		if !res.Namespaced {
			n.Namespace = ""
		}
	} else {
		n.Resource = resource
	}
	if sub != "" {
		n.Resource += "/" + sub
	}
	o.observe(n, err)
}

func (o *observed) Get(ctx context.Context, resource, namespace, name string) (scripting.Object, error) {
	obj, err := o.Client.Get(ctx, resource, namespace, name)
	o.note(err, "get", "get", resource, "", namespace)
	return obj, err
}

func (o *observed) List(ctx context.Context, resource string, opts scripting.ListOptions) ([]scripting.Object, error) {
	objs, err := o.Client.List(ctx, resource, opts)
	o.note(err, "list", "list", resource, "", opts.Namespace)
	return objs, err
}

func (o *observed) Create(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	out, err := o.Client.Create(ctx, resource, obj)
	o.note(err, "create", "create", resource, "", objectNamespace(obj))
	return out, err
}

func (o *observed) Update(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	out, err := o.Client.Update(ctx, resource, obj)
	o.note(err, "update", "update", resource, "", objectNamespace(obj))
	return out, err
}

func (o *observed) UpdateStatus(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	out, err := o.Client.UpdateStatus(ctx, resource, obj)
	o.note(err, "updateStatus", "update", resource, "status", objectNamespace(obj))
	return out, err
}

func (o *observed) Patch(ctx context.Context, resource, namespace, name string, patch []byte, opts scripting.PatchOptions) (scripting.Object, error) {
	out, err := o.Client.Patch(ctx, resource, namespace, name, patch, opts)
	if opts.Type != "apply" {
		o.note(err, "patch", "patch", resource, "", namespace)
		return out, err
	}
	// An apply also needs create, to create a missing object; a refusal says which verb.
	patchErr, createErr := err, err
	if apierrors.IsForbidden(err) {
		if strings.Contains(err.Error(), "cannot create") {
			patchErr = nil
		} else {
			createErr = nil
		}
	}
	o.note(patchErr, "patch", "patch", resource, "", namespace)
	o.note(createErr, "patch", "create", resource, "", namespace)
	return out, err
}

func (o *observed) PatchStatus(ctx context.Context, resource, namespace, name string, patch []byte, opts scripting.PatchOptions) (scripting.Object, error) {
	out, err := o.Client.PatchStatus(ctx, resource, namespace, name, patch, opts)
	o.note(err, "patchStatus", "patch", resource, "status", namespace)
	return out, err
}

func (o *observed) Delete(ctx context.Context, resource, namespace, name string, opts scripting.DeleteOptions) error {
	err := o.Client.Delete(ctx, resource, namespace, name, opts)
	o.note(err, "delete", "delete", resource, "", namespace)
	return err
}

func (o *observed) Event(ctx context.Context, obj scripting.Object, eventType, reason, message string) error {
	err := o.Client.Event(ctx, obj, eventType, reason, message)
	o.note(err, "event", "create", "v1/events", "", objectNamespace(obj))
	o.note(nil, "event", "patch", "v1/events", "", objectNamespace(obj)) // used by a repeat (k8sclient counts it); not sent now
	return err
}

func objectNamespace(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	return ns
}
