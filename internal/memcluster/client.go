package memcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Write is one write request a client sent, as Client's recorder receives it.
type Write struct {
	// Verb is the k8s.* call that sends it: create, update, updateStatus, patch, patchStatus
	// or delete.
	Verb      string
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
	// Body is the object (create, update), the patch (JSON decoded when it is JSON, else
	// the text) or nil (delete).
	Body      any
	PatchType types.PatchType
	DryRun    bool
	// PropagationPolicy of a delete, when given.
	PropagationPolicy string
	// Err is the cluster's answer when the write failed.
	Err error
	// Warnings are the admission hook's warnings for the write, in order (kubectl prints
	// them); whether it was admitted or not.
	Warnings []string
}

// Client returns a dynamic client on the cluster. Each write it sends is passed to record
// (when not nil) after the cluster has answered, on the caller's goroutine. Requests go
// through the same encoding as the real dynamic client, so a client-side error (an object
// without kind, a missing name) reads the same.
func (c *Cluster) Client(record func(Write)) dynamic.Interface {
	return &client{c: c, record: record}
}

type client struct {
	c      *Cluster
	record func(Write)
}

// IsWatchListSemanticsUnSupported tells informers to list, then watch: the cluster does not
// serve streaming lists.
func (*client) IsWatchListSemanticsUnSupported() bool { return true }

func (cl *client) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return &resourceClient{cl: cl, gvr: gvr}
}

type resourceClient struct {
	cl        *client
	gvr       schema.GroupVersionResource
	namespace string
}

var _ dynamic.NamespaceableResourceInterface = (*resourceClient)(nil)

func (r *resourceClient) Namespace(ns string) dynamic.ResourceInterface {
	copied := *r
	copied.namespace = ns
	return &copied
}

var errNameRequired = errors.New("name is required")

func (r *resourceClient) log(w Write, err error) {
	if r.cl.record == nil {
		return
	}
	w.Resource, w.Namespace, w.Err = r.gvr, r.namespace, err
	r.cl.record(w)
}

// warnings collects the warnings of one write: opts.Warn appends to what it returns.
func warnings(opts *WriteOptions) *[]string {
	var out []string
	opts.Warn = func(w string) { out = append(out, w) }
	return &out
}

// encode is the dynamic client's encoding of a request body, and a copy.
func encode(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	data, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &out.Object); err != nil {
		return nil, err
	}
	return out, nil
}

func subresource(subresources []string) (string, error) {
	switch len(subresources) {
	case 0:
		return "", nil
	case 1:
		return subresources[0], nil
	}
	return "", fmt.Errorf("subresource %v: only one is supported", subresources)
}

func (r *resourceClient) Create(_ context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error) {
	body, err := encode(obj)
	if err != nil {
		return nil, err
	}
	sub, err := subresource(subresources)
	if err != nil {
		return nil, err
	}
	wo := WriteOptions{DryRun: isDryRun(opts.DryRun), FieldManager: opts.FieldManager, Subresource: sub}
	warned := warnings(&wo)
	out, err := r.cl.c.Create(r.gvr, r.namespace, body, wo)
	r.log(Write{Verb: "create", Name: nameOf(out, body), Body: body.Object, DryRun: wo.DryRun, Warnings: *warned}, err)
	return out, err
}

func (r *resourceClient) Update(_ context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error) {
	body, err := encode(obj)
	if err != nil {
		return nil, err
	}
	if body.GetName() == "" {
		return nil, errNameRequired
	}
	sub, err := subresource(subresources)
	if err != nil {
		return nil, err
	}
	wo := WriteOptions{DryRun: isDryRun(opts.DryRun), FieldManager: opts.FieldManager, Subresource: sub}
	warned := warnings(&wo)
	out, err := r.cl.c.Update(r.gvr, r.namespace, body, wo)
	verb := "update"
	if sub == "status" {
		verb = "updateStatus"
	}
	r.log(Write{Verb: verb, Name: body.GetName(), Body: body.Object, DryRun: wo.DryRun, Warnings: *warned}, err)
	return out, err
}

func (r *resourceClient) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return r.Update(ctx, obj, opts, "status")
}

func (r *resourceClient) Delete(_ context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error {
	if name == "" {
		return errNameRequired
	}
	if len(subresources) > 0 {
		return fmt.Errorf("delete %v: subresources are not supported", subresources)
	}
	wo := WriteOptions{DryRun: isDryRun(opts.DryRun), PropagationPolicy: opts.PropagationPolicy, Preconditions: opts.Preconditions}
	warned := warnings(&wo)
	_, err := r.cl.c.Delete(r.gvr, r.namespace, name, wo)
	w := Write{Verb: "delete", Name: name, DryRun: wo.DryRun, Warnings: *warned}
	if opts.PropagationPolicy != nil {
		w.PropagationPolicy = string(*opts.PropagationPolicy)
	}
	r.log(w, err)
	return err
}

func (r *resourceClient) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	list, err := r.List(ctx, listOpts)
	if err != nil {
		return err
	}
	for i := range list.Items {
		if err := r.Namespace(list.Items[i].GetNamespace()).Delete(ctx, list.Items[i].GetName(), opts); err != nil {
			return err
		}
	}
	return nil
}

func (r *resourceClient) Get(_ context.Context, name string, _ metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if name == "" {
		return nil, errNameRequired
	}
	if len(subresources) > 0 && subresources[0] != "status" {
		return nil, notServed()
	}
	return r.cl.c.Get(r.gvr, r.namespace, name)
}

func (r *resourceClient) List(_ context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.cl.c.List(r.gvr, r.namespace, opts)
}

func (r *resourceClient) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.cl.c.Watch(ctx, r.gvr, r.namespace, opts)
}

func (r *resourceClient) Patch(_ context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if name == "" {
		return nil, errNameRequired
	}
	sub, err := subresource(subresources)
	if err != nil {
		return nil, err
	}
	wo := WriteOptions{DryRun: isDryRun(opts.DryRun), FieldManager: opts.FieldManager, Subresource: sub}
	if opts.Force != nil {
		wo.Force = *opts.Force
	}
	warned := warnings(&wo)
	out, err := r.cl.c.Patch(r.gvr, r.namespace, name, pt, data, wo)
	verb := "patch"
	if sub == "status" {
		verb = "patchStatus"
	}
	r.log(Write{Verb: verb, Name: name, Body: patchBody(data), PatchType: pt, DryRun: wo.DryRun, Warnings: *warned}, err)
	return out, err
}

func (r *resourceClient) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	return r.Patch(ctx, name, types.ApplyPatchType, data, opts.ToPatchOptions(), subresources...)
}

func (r *resourceClient) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return r.Apply(ctx, name, obj, opts, "status")
}

func isDryRun(dryRun []string) bool { return len(dryRun) > 0 }

func nameOf(out, body *unstructured.Unstructured) string {
	if out != nil {
		return out.GetName()
	}
	return body.GetName()
}

// patchBody is a patch as a Write shows it: decoded when it is JSON.
func patchBody(data []byte) any {
	var v any
	if err := json.Unmarshal(data, &v); err == nil {
		return v
	}
	return string(data)
}
