package controlplane

import (
	"context"
	"fmt"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ShardedListAndWatch is KEP-5866's feature gate (shardSelector on list and watch), alpha and
// off by default since Kubernetes 1.36.
const ShardedListAndWatch = "ShardedListAndWatch"

// shardedListSince is the first release whose kube-apiserver knows ShardedListAndWatch.
var shardedListSince = utilversion.MustParseGeneric("v1.36.0")

// ServerVersion is the main kube-apiserver's release as its /version says (gitVersion).
func (cp *ControlPlane) ServerVersion(ctx context.Context) (string, error) {
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return "", fmt.Errorf("build client: %w", err)
	}
	info, err := client.Discovery().ServerVersionWithContext(ctx)
	if err != nil {
		return "", fmt.Errorf("get kube-apiserver's version: %w", err)
	}
	return info.GitVersion, nil
}

// KnowsFeatureGate reports whether the main kube-apiserver knows the feature gate name, on or
// off: whether its /metrics has a kubernetes_feature_enabled series for it. A kube-apiserver
// refuses to start with a gate it does not know, and make test-compat runs the tests against
// releases older than some gates.
func (cp *ControlPlane) KnowsFeatureGate(ctx context.Context, name string) (bool, error) {
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return false, fmt.Errorf("build client: %w", err)
	}
	body, err := client.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return false, fmt.Errorf("read kube-apiserver's metrics: %w", err)
	}
	series := `kubernetes_feature_enabled{name="` + name + `",`
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, series) {
			return true, nil
		}
	}
	return false, nil
}

// ShardedList is the API server a test of sharded list and watch runs its gate-on case on.
type ShardedList struct {
	// Config reaches a kube-apiserver with ShardedListAndWatch on when Served; otherwise the
	// main kube-apiserver, which does not know the gate and ignores shardSelector.
	Config *rest.Config
	// Served says the API server at Config has the gate on (it filters and echoes shardInfo).
	Served bool
	// Version is the release of the control plane's kube-apiserver (its /version), for the
	// tests' messages.
	Version string
	extra   *Extra
}

// StartShardedList starts a kube-apiserver with ShardedListAndWatch on, on the same etcd,
// where the control plane's release knows the gate (Kubernetes 1.36 and later). Where it does
// not (make test-compat's older releases) it starts nothing and returns the main
// kube-apiserver with Served false: the gate-on case then checks the runner's fallback. A
// release that should know the gate but does not list it is an error, so the pinned release
// cannot fall back unnoticed. The caller stops it (Stop also stops it, before etcd).
func (cp *ControlPlane) StartShardedList(ctx context.Context) (*ShardedList, error) {
	v, err := cp.ServerVersion(ctx)
	if err != nil {
		return nil, err
	}
	known, err := cp.KnowsFeatureGate(ctx, ShardedListAndWatch)
	if err != nil {
		return nil, err
	}
	parsed, err := utilversion.ParseGeneric(v)
	if err != nil {
		return nil, fmt.Errorf("parse kube-apiserver's version %q: %w", v, err)
	}
	if !known {
		if !parsed.LessThan(shardedListSince) {
			return nil, fmt.Errorf("start a sharded-list API server: kube-apiserver %s lists no %s in kubernetes_feature_enabled, which it knows since %s", v, ShardedListAndWatch, shardedListSince)
		}
		return &ShardedList{Config: cp.Config, Version: v}, nil
	}
	x, err := cp.StartExtraAPIServer(ctx, "--feature-gates="+ShardedListAndWatch+"=true")
	if err != nil {
		return nil, fmt.Errorf("start a kube-apiserver %s with %s on: %w", v, ShardedListAndWatch, err)
	}
	return &ShardedList{Config: x.Config, Served: true, Version: v, extra: x}, nil
}

// Stop stops the kube-apiserver StartShardedList started, if any.
func (s *ShardedList) Stop() error {
	if s.extra == nil {
		return nil
	}
	return s.extra.Stop()
}
