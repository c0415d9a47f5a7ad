package main

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/typegen"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// markPreferred marks, among resources that share a kind, those of their group's storage
// version (read from the CustomResourceDefinition, when the resource is a custom one and it
// may be read) or else its preferred version (from discovery): those keep the kind's plain
// interface name. Resources whose kind is unique need no mark and cost no request.
func markPreferred(ctx context.Context, disc discovery.DiscoveryInterface, dyn dynamic.Interface, resources []typegen.Resource) {
	kinds := map[string]int{}
	for _, r := range resources {
		kinds[r.Kind]++
	}
	var preferred map[string]string // group -> preferred version, read once when needed
	for i, r := range resources {
		if kinds[r.Kind] < 2 {
			continue
		}
		if v, ok := storageVersion(ctx, dyn, r); ok {
			resources[i].Preferred = v == r.Version
			continue
		}
		if preferred == nil {
			preferred = preferredVersions(disc)
		}
		resources[i].Preferred = preferred[r.Group] == r.Version
	}
}

// storageVersion is the version a custom resource is stored in; false for a built-in
// resource, or when the CustomResourceDefinition cannot be read.
func storageVersion(ctx context.Context, dyn dynamic.Interface, r typegen.Resource) (string, bool) {
	if r.Group == "" {
		return "", false
	}
	crd, err := dyn.Resource(crdResource).Get(ctx, r.Resource+"."+r.Group, metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if storage, _ := m["storage"].(bool); storage {
			name, _ := m["name"].(string)
			return name, name != ""
		}
	}
	return "", false
}

// preferredVersions maps each group to its preferred version; empty when discovery fails
// (every resource then keeps the order it was asked in).
func preferredVersions(disc discovery.DiscoveryInterface) map[string]string {
	out := map[string]string{}
	groups, err := disc.ServerGroups()
	if err != nil {
		return out
	}
	for _, g := range groups.Groups {
		out[g.Name] = g.PreferredVersion.Version
	}
	return out
}
