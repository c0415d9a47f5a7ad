package memcluster_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

var update = flag.Bool("update", false, "rewrite builtin.json from the control plane's discovery")

// The built-in resource table is the real server's discovery, so resource names, kinds,
// scopes, verbs, short names and status subresources cannot drift from it.
func TestBuiltinResourcesMatchServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	real, err := disc.ServerVersionWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if real.GitVersion != memcluster.KubernetesVersion {
		t.Fatalf("the control plane is %s, the in-memory cluster behaves as %s: update KubernetesVersion with builtin.json", real.GitVersion, memcluster.KubernetesVersion)
	}
	groups, lists, err := disc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	custom := customGroups(t, cp)
	doc := map[string]any{"groups": builtinGroups(groups, custom), "resources": inGroupOrder(groups, builtinLists(lists, custom))}
	got, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("builtin.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("builtin.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		_ = os.WriteFile(filepath.Join(os.TempDir(), "memcluster-builtin-got.json"), got, 0o644)
		t.Fatal("builtin.json differs from the control plane's discovery; run: go test ./internal/memcluster -run TestBuiltinResourcesMatchServer -update")
	}
}

// customGroups are the groups of CRDs that tests running beside this one created.
func customGroups(t *testing.T, cp *controlplane.ControlPlane) map[string]bool {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	list, err := dyn.Resource(gvr).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, crd := range list.Items {
		out[crd.GetName()[strings.Index(crd.GetName(), ".")+1:]] = true
	}
	return out
}

// isCustom: a CRD's group, or one under .test, the reserved domain of the corpus CRDs (one
// may be coming or going while this test reads discovery).
func isCustom(group string, custom map[string]bool) bool {
	return custom[group] || strings.HasSuffix(group, ".test")
}

func builtinGroups(groups []*metav1.APIGroup, custom map[string]bool) []metav1.APIGroup {
	var out []metav1.APIGroup
	for _, g := range groups {
		if !isCustom(g.Name, custom) {
			c := *g
			c.ServerAddressByClientCIDRs = nil
			out = append(out, c)
		}
	}
	return out
}

func builtinLists(lists []*metav1.APIResourceList, custom map[string]bool) []*metav1.APIResourceList {
	var out []*metav1.APIResourceList
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		if isCustom(gv.Group, custom) {
			continue
		}
		c := l.DeepCopy()
		for i := range c.APIResources {
			c.APIResources[i].StorageVersionHash = ""
		}
		out = append(out, c)
	}
	return out
}

// inGroupOrder sorts resource lists as the groups and their versions are listed: discovery
// fetches them in parallel, in no particular order.
func inGroupOrder(groups []*metav1.APIGroup, lists []*metav1.APIResourceList) []*metav1.APIResourceList {
	rank := map[string]int{}
	for _, g := range groups {
		for _, v := range g.Versions {
			rank[v.GroupVersion] = len(rank)
		}
	}
	slices.SortStableFunc(lists, func(a, b *metav1.APIResourceList) int { return rank[a.GroupVersion] - rank[b.GroupVersion] })
	return lists
}

// The in-memory cluster's /version says which release it behaves as.
func TestDiscoveryNamesTheVersionItBehavesAs(t *testing.T) {
	t.Parallel()
	mem, err := memcluster.New(memcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := mem.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != memcluster.KubernetesVersion+"-memcluster" || v.Major != "1" || v.Minor != "37" {
		t.Fatalf("/version = %+v, want %s-memcluster, major 1, minor 37", v, memcluster.KubernetesVersion)
	}
}
