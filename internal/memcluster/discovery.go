package memcluster

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubetesting "k8s.io/client-go/testing"
)

// discoveryClient serves the registry as a discovery.DiscoveryInterface. It answers the
// aggregated form, which is what client-go's cached discovery asks first, and the per group
// version form; the rest comes from client-go's fake.
type discoveryClient struct {
	*fakediscovery.FakeDiscovery
	reg *registry
}

var (
	_ discovery.DiscoveryInterface                      = (*discoveryClient)(nil)
	_ discovery.AggregatedDiscoveryInterfaceWithContext = (*discoveryClient)(nil)
)

// KubernetesVersion is the kube-apiserver release the cluster behaves as: its built-in
// resources are that server's discovery (builtin.json, TestBuiltinResourcesMatchServer), and
// TestCrossCheckWithControlPlane compares its writes and watches with that server's in `make
// test`, and with those of the older minors of the support window in `make test-compat`.
const KubernetesVersion = "v1.37.2"

// serverVersion is what the cluster's discovery answers for /version: KubernetesVersion,
// marked as this in-memory cluster's.
var serverVersion = func() version.Info {
	v := utilversion.MustParseSemantic(KubernetesVersion)
	return version.Info{Major: strconv.Itoa(int(v.Major())), Minor: strconv.Itoa(int(v.Minor())),
		GitVersion: KubernetesVersion + "-memcluster", Platform: "memcluster"}
}()

func newDiscovery(reg *registry) *discoveryClient {
	return &discoveryClient{FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &kubetesting.Fake{}, FakedServerVersion: &serverVersion}, reg: reg}
}

func (d *discoveryClient) GroupsAndMaybeResourcesWithContext(context.Context) (*metav1.APIGroupList,
	map[schema.GroupVersion]*metav1.APIResourceList, map[schema.GroupVersion]error, error) {
	groups, lists := d.reg.snapshot()
	return groups, lists, nil, nil
}

func (d *discoveryClient) GroupsAndMaybeResources() (*metav1.APIGroupList,
	map[schema.GroupVersion]*metav1.APIResourceList, map[schema.GroupVersion]error, error) {
	return d.GroupsAndMaybeResourcesWithContext(context.Background())
}

func (d *discoveryClient) ServerGroups() (*metav1.APIGroupList, error) {
	groups, _ := d.reg.snapshot()
	return groups, nil
}

func (d *discoveryClient) ServerGroupsWithContext(context.Context) (*metav1.APIGroupList, error) {
	return d.ServerGroups()
}

func (d *discoveryClient) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	gv, err := schema.ParseGroupVersion(groupVersion)
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", groupVersion, err)
	}
	_, lists := d.reg.snapshot()
	if l, ok := lists[gv]; ok {
		return l, nil
	}
	return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
	}}
}

func (d *discoveryClient) ServerResourcesForGroupVersionWithContext(_ context.Context, groupVersion string) (*metav1.APIResourceList, error) {
	return d.ServerResourcesForGroupVersion(groupVersion)
}

func (d *discoveryClient) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return discovery.ServerGroupsAndResources(d)
}

func (d *discoveryClient) ServerGroupsAndResourcesWithContext(ctx context.Context) ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return discovery.ServerGroupsAndResourcesWithContext(ctx, d)
}
