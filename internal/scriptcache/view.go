package scriptcache

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/jsinformer/jsinformer/scripting"
)

// View is ctx.cache for events about one resource of one version: resource "" in a call
// means that resource.
type View struct {
	Store    *Store
	Resource string                            // canonical --gvr spelling
	Resolve  func(name string) (string, error) // a resource name as users write it to Resource's spelling
	// Partition, when set, refuses the lookups its partial cache cannot answer whole.
	Partition *Partition
}

var _ scripting.Cache = (*View)(nil)

func (c *View) resourceName(name string) (string, error) {
	if name == "" {
		return c.Resource, nil
	}
	return c.Resolve(name)
}

// Get answers ctx.cache.get from the version's store.
func (c *View) Get(resource, namespace, name string) (scripting.Object, error) {
	if err := c.Partition.checkNamespace(namespace); err != nil {
		return nil, err
	}
	res, err := c.resourceName(resource)
	if err != nil {
		return nil, err
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	return c.Store.get(res, key), nil
}

// List answers ctx.cache.list.
func (c *View) List(resource, namespace, labelSelector string) ([]scripting.Object, error) {
	if err := c.Partition.checkNamespace(namespace); err != nil {
		return nil, err
	}
	res, err := c.resourceName(resource)
	if err != nil {
		return nil, err
	}
	selector, err := labels.Parse(labelSelector)
	if err != nil {
		return nil, fmt.Errorf("parse label selector %q: %w", labelSelector, err)
	}
	return c.Store.list(res, namespace, selector), nil
}

// ByIndex answers ctx.cache.byIndex.
func (c *View) ByIndex(index, value string) ([]scripting.Object, error) {
	if err := c.Partition.checkIndexValue(value); err != nil {
		return nil, err
	}
	return c.Store.byIndexObjects(index, value)
}

// IndexKeys answers ctx.cache.indexKeys.
func (c *View) IndexKeys(index, value string) ([]string, error) {
	if err := c.Partition.checkIndexValue(value); err != nil {
		return nil, err
	}
	keys, err := c.Store.byIndex(index, value)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Object
	}
	return out, nil
}
