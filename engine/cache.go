package engine

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/jsinformer/jsinformer/scripting"
)

// cacheView is ctx.cache for events about one resource of one version: resource "" in a call
// means that resource.
type cacheView struct {
	store    *store
	resource string // canonical --gvr spelling
	resolve  func(name string) (string, error)
}

var _ scripting.Cache = (*cacheView)(nil)

func (c *cacheView) resourceName(name string) (string, error) {
	if name == "" {
		return c.resource, nil
	}
	return c.resolve(name)
}

func (c *cacheView) Get(resource, namespace, name string) (scripting.Object, error) {
	res, err := c.resourceName(resource)
	if err != nil {
		return nil, err
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	return c.store.get(res, key), nil
}

func (c *cacheView) List(resource, namespace, labelSelector string) ([]scripting.Object, error) {
	res, err := c.resourceName(resource)
	if err != nil {
		return nil, err
	}
	selector, err := labels.Parse(labelSelector)
	if err != nil {
		return nil, fmt.Errorf("parse label selector %q: %w", labelSelector, err)
	}
	return c.store.list(res, namespace, selector), nil
}

func (c *cacheView) ByIndex(index, value string) ([]scripting.Object, error) {
	return c.store.byIndexObjects(index, value)
}

func (c *cacheView) IndexKeys(index, value string) ([]string, error) {
	keys, err := c.store.byIndex(index, value)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.key
	}
	return out, nil
}
