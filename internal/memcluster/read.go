package memcluster

import (
	"encoding/json"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Get returns a copy of an object, or the server's NotFound.
func (c *Cluster) Get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	res, err := c.served(gvr, "get")
	if err != nil {
		return nil, err
	}
	if !res.namespaced {
		namespace = ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	obj := c.stored(gvr, namespace, name)
	if obj == nil {
		return nil, apierrors.NewNotFound(res.groupResource(), name)
	}
	return obj.DeepCopy(), nil
}

// List returns copies of the objects in namespace ("" for all) matching the options' label
// and field selectors, sorted by namespace and name as etcd returns them.
func (c *Cluster) List(gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	res, err := c.served(gvr, "list")
	if err != nil {
		return nil, err
	}
	sel, err := newSelection(res, namespace, opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": res.kind + "List"}}
	list.SetResourceVersion(strconv.FormatInt(c.rv, 10))
	objs := c.objects[gvr]
	for _, k := range sortedKeys(objs) {
		if sel.matches(objs[k]) {
			list.Items = append(list.Items, *objs[k].DeepCopy())
		}
	}
	return list, nil
}

// normalize copies obj through JSON, as a request body travels: numbers become int64 or
// float64, and nothing of the caller's is shared with the store.
func normalize(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("encode object: %v", err))
	}
	out := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &out.Object); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return out, nil
}
