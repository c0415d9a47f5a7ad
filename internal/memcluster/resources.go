package memcluster

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinDiscovery is the discovery document of the kube-apiserver the project tests against
// (v1.37), as TestBuiltinResourcesMatchServer reads it from the real control plane; run that
// test with -update to rewrite it.
//
//go:embed builtin.json
var builtinDiscovery []byte

// discoveryDoc is the stored form of a server's discovery: its groups, in the server's order
// (which decides preferred versions), and the resources of every group version.
type discoveryDoc struct {
	Groups    []metav1.APIGroup         `json:"groups"`
	Resources []*metav1.APIResourceList `json:"resources"`
}

// resource is what the cluster knows of one served resource.
type resource struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	status     bool // has a status subresource
	custom     bool // served from a CustomResourceDefinition
	verbs      []string
}

func (r *resource) gvk() schema.GroupVersionKind { return r.gvr.GroupVersion().WithKind(r.kind) }

// groupResource is how errors name the resource: "deployments.apps", "configmaps".
func (r *resource) groupResource() schema.GroupResource { return r.gvr.GroupResource() }

// registry holds the served resources: the built-in ones and those of the CRDs created in
// the cluster. Safe for concurrent use.
type registry struct {
	mu     sync.RWMutex
	groups []metav1.APIGroup
	lists  []*metav1.APIResourceList
	byGVR  map[schema.GroupVersionResource]*resource
}

func newRegistry() (*registry, error) {
	var doc discoveryDoc
	if err := json.Unmarshal(builtinDiscovery, &doc); err != nil {
		return nil, fmt.Errorf("read built-in discovery: %w", err)
	}
	r := &registry{groups: doc.Groups, lists: doc.Resources, byGVR: map[schema.GroupVersionResource]*resource{}}
	for _, list := range doc.Resources {
		r.index(list, false)
	}
	return r, nil
}

// index adds one group version's resources to byGVR; called with mu held or before sharing.
func (r *registry) index(list *metav1.APIResourceList, custom bool) {
	gv, err := schema.ParseGroupVersion(list.GroupVersion)
	if err != nil {
		return
	}
	for _, ar := range list.APIResources {
		if strings.Contains(ar.Name, "/") {
			continue
		}
		r.byGVR[gv.WithResource(ar.Name)] = &resource{
			gvr: gv.WithResource(ar.Name), kind: ar.Kind, namespaced: ar.Namespaced, custom: custom,
			status: hasSubresource(list, ar.Name+"/status"), verbs: ar.Verbs,
		}
	}
}

func hasSubresource(list *metav1.APIResourceList, name string) bool {
	for _, ar := range list.APIResources {
		if ar.Name == name {
			return true
		}
	}
	return false
}

// lookup returns the resource served at gvr, or nil.
func (r *registry) lookup(gvr schema.GroupVersionResource) *resource {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byGVR[gvr]
}

// byKind returns the resource of a group version kind, or nil.
func (r *registry) byKind(gvk schema.GroupVersionKind) *resource {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, res := range r.byGVR {
		if res.gvk() == gvk {
			return res
		}
	}
	return nil
}

// snapshot returns the discovery document as the server would serve it now.
func (r *registry) snapshot() (*metav1.APIGroupList, map[schema.GroupVersion]*metav1.APIResourceList) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	groups := &metav1.APIGroupList{Groups: slices.Clone(r.groups)}
	lists := make(map[schema.GroupVersion]*metav1.APIResourceList, len(r.lists))
	for _, l := range r.lists { // CRDs of one group version have a list each: merge them
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		if merged := lists[gv]; merged != nil {
			merged.APIResources = append(merged.APIResources, l.DeepCopy().APIResources...)
		} else {
			lists[gv] = l.DeepCopy()
		}
	}
	return groups, lists
}

// crdResources is the discovery of a CustomResourceDefinition: one resource list per served
// version. A CRD that cannot be read serves nothing, as on a server that rejects it.
func crdResources(crd *unstructured.Unstructured) (group string, lists []*metav1.APIResourceList) {
	group, _, _ = unstructured.NestedString(crd.Object, "spec", "group")
	names := map[string]string{}
	for _, k := range []string{"plural", "singular", "kind"} {
		names[k], _, _ = unstructured.NestedString(crd.Object, "spec", "names", k)
	}
	short, _, _ := unstructured.NestedStringSlice(crd.Object, "spec", "names", "shortNames")
	categories, _, _ := unstructured.NestedStringSlice(crd.Object, "spec", "names", "categories")
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if group == "" || names["plural"] == "" || names["kind"] == "" {
		return "", nil
	}
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		if served, _ := vm["served"].(bool); !served || name == "" {
			continue
		}
		ar := metav1.APIResource{
			Name: names["plural"], SingularName: firstNonEmpty(names["singular"], strings.ToLower(names["kind"])),
			Namespaced: scope != "Cluster", Kind: names["kind"], ShortNames: short, Categories: categories,
			Verbs: metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
		}
		list := &metav1.APIResourceList{GroupVersion: group + "/" + name, APIResources: []metav1.APIResource{ar}}
		if _, ok, _ := unstructured.NestedMap(vm, "subresources", "status"); ok {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: ar.Name + "/status", Namespaced: ar.Namespaced, Kind: ar.Kind, Verbs: metav1.Verbs{"get", "patch", "update"},
			})
		}
		lists = append(lists, list)
	}
	return group, lists
}

// setCRD serves (or stops serving, with nil lists) the resources of the CRD named name.
func (r *registry) setCRD(group string, plural string, lists []*metav1.APIResourceList) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropCRD(group, plural)
	if len(lists) == 0 {
		return
	}
	for _, l := range lists {
		r.lists = append(r.lists, l)
		r.index(l, true)
		r.addGroupVersion(l.GroupVersion)
	}
}

// dropCRD removes a CRD's resources; called with mu held.
func (r *registry) dropCRD(group, plural string) {
	for gvr, res := range r.byGVR {
		if res.custom && gvr.Group == group && gvr.Resource == plural {
			delete(r.byGVR, gvr)
		}
	}
	r.lists = slices.DeleteFunc(r.lists, func(l *metav1.APIResourceList) bool {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		return gv.Group == group && len(l.APIResources) > 0 && l.APIResources[0].Name == plural
	})
}

// addGroupVersion lists a group version in the groups; the first version of a new group is
// its preferred one. Called with mu held.
func (r *registry) addGroupVersion(groupVersion string) {
	gv, _ := schema.ParseGroupVersion(groupVersion)
	entry := metav1.GroupVersionForDiscovery{GroupVersion: groupVersion, Version: gv.Version}
	for i := range r.groups {
		if r.groups[i].Name == gv.Group {
			if !slices.Contains(r.groups[i].Versions, entry) {
				r.groups[i].Versions = append(r.groups[i].Versions, entry)
			}
			return
		}
	}
	r.groups = append(r.groups, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{entry}, PreferredVersion: entry})
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
