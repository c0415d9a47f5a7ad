package dynamicinformer

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// ErrListWatchOnly is returned by every request of NewClient's client but List and Watch.
var ErrListWatchOnly = errors.New("the informer client only lists and watches; use a dynamic client for other requests")

// Resource implements dynamic.Interface: NewClient's client serves lists and watches only.
// Its decoder shares equal subtrees between the objects of one response, which is safe for
// informers (cached objects are immutable) and nowhere else: a Get or a write's response
// given to code that edits it could change another object through a shared subtree.
func (c *client) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return listWatchOnly{listWatchOnlyNS: listWatchOnlyNS{ResourceInterface: c.Interface.Resource(gvr), gvr: gvr}, all: c.Interface.Resource(gvr)}
}

type listWatchOnly struct {
	listWatchOnlyNS
	all dynamic.NamespaceableResourceInterface
}

func (r listWatchOnly) Namespace(ns string) dynamic.ResourceInterface {
	return listWatchOnlyNS{ResourceInterface: r.all.Namespace(ns), gvr: r.gvr}
}

// listWatchOnlyNS passes List and Watch on and refuses everything else.
type listWatchOnlyNS struct {
	dynamic.ResourceInterface
	gvr schema.GroupVersionResource
}

func (r listWatchOnlyNS) refuse(verb string) error {
	return fmt.Errorf("%s %s: %w", verb, FormatGVR(r.gvr), ErrListWatchOnly)
}

func (r listWatchOnlyNS) Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, r.refuse("create")
}

func (r listWatchOnlyNS) Update(context.Context, *unstructured.Unstructured, metav1.UpdateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, r.refuse("update")
}

func (r listWatchOnlyNS) UpdateStatus(context.Context, *unstructured.Unstructured, metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return nil, r.refuse("update status of")
}

func (r listWatchOnlyNS) Delete(context.Context, string, metav1.DeleteOptions, ...string) error {
	return r.refuse("delete")
}

func (r listWatchOnlyNS) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return r.refuse("delete collection of")
}

func (r listWatchOnlyNS) Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, r.refuse("get")
}

func (r listWatchOnlyNS) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, r.refuse("patch")
}

func (r listWatchOnlyNS) Apply(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, r.refuse("apply")
}

func (r listWatchOnlyNS) ApplyStatus(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return nil, r.refuse("apply status of")
}
