package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// The objects of BenchmarkShardCache: realistic Deployments (objects_test.go) spread round
// robin over 200 namespaces named as teams and environments are, and for the skewed variant
// one more namespace holding a third as many again (a quarter of all). Created once per
// process, on first use, and never changed.
const (
	// shardCacheObjectsEnv overrides shardCacheObjects (a smaller run to try the benchmark).
	shardCacheObjectsEnv = "JSINFORMER_SHARDCACHE_OBJECTS"
	shardCacheObjects    = 100_000
	// shardCacheSkewEnv overrides the large namespace's objects (default: a third of the
	// spread ones, so that it holds a quarter of all).
	shardCacheSkewEnv = "JSINFORMER_SHARDCACHE_SKEW"
	// shardCacheLarge is the skewed variant's large namespace.
	shardCacheLarge = "ml-training"
)

var (
	cacheTeams = []string{"payments", "search", "checkout", "identity", "catalog", "ads", "mobile",
		"billing", "fraud", "risk", "growth", "platform", "data-eng", "ml-serving", "infra", "security",
		"support", "notifications", "messaging", "media", "maps", "pricing", "inventory", "shipping", "reviews"}
	cacheEnvs = []string{"prod", "staging", "dev", "qa", "canary", "perf", "sandbox", "preview"}
)

// cacheNamespaces are the 200 namespaces of the spread objects: team-environment, as
// clusters name them (names that differ at both ends, unlike ns-000 … ns-199).
func cacheNamespaces() []string {
	var out []string
	for _, env := range cacheEnvs {
		for _, team := range cacheTeams {
			out = append(out, team+"-"+env)
		}
	}
	return out
}

// cacheSet is a set of seeded objects: how many in each namespace.
type cacheSet struct {
	name string
	byNS map[string]int
}

func (s cacheSet) total() int {
	n := 0
	for _, c := range s.byNS {
		n += c
	}
	return n
}

var (
	spreadOnce, largeOnce sync.Once
	spreadErr, largeErr   error
)

// seededCache returns the control plane once the spread objects (and, when skewed, the large
// namespace's) exist, and the set the benchmark then watches.
func seededCache(b *testing.B, skewed bool) (*controlplane.ControlPlane, cacheSet) {
	b.Helper()
	cp := controlplane.Require(b, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	spread := envInt(b, shardCacheObjectsEnv, shardCacheObjects)
	names := cacheNamespaces()
	set := cacheSet{name: "uniform", byNS: map[string]int{}}
	for i := range spread {
		set.byNS[names[i%len(names)]]++
	}
	spreadOnce.Do(func() {
		start := time.Now()
		spreadErr = seedSpread(context.Background(), dyn, names, spread)
		b.Logf("seeded %d deployments over %d namespaces in %s", spread, len(names), time.Since(start).Round(time.Millisecond))
	})
	if spreadErr != nil {
		b.Fatalf("seed the spread deployments: %v", spreadErr)
	}
	if !skewed {
		return cp, set
	}
	large := envInt(b, shardCacheSkewEnv, spread/3)
	largeOnce.Do(func() {
		start := time.Now()
		largeErr = seedSpread(context.Background(), dyn, []string{shardCacheLarge}, large)
		b.Logf("seeded %d deployments in %s in %s", large, shardCacheLarge, time.Since(start).Round(time.Millisecond))
	})
	if largeErr != nil {
		b.Fatalf("seed the large namespace: %v", largeErr)
	}
	set.name = "skewed"
	set.byNS[shardCacheLarge] = large
	return cp, set
}

// seedSpread creates the namespaces and count realistic Deployments, number i in
// namespaces[i%len], from seedWorkers goroutines (owned here: started and waited for).
func seedSpread(ctx context.Context, dyn dynamic.Interface, namespaces []string, count int) error {
	for _, ns := range namespaces {
		if err := createNamespace(ctx, dyn, ns); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range seedWorkers {
		wg.Go(func() {
			for i := range next {
				obj := &unstructured.Unstructured{Object: deploymentObject(i)}
				ns := namespaces[i%len(namespaces)]
				obj.SetNamespace(ns)
				_, err := dyn.Resource(deploymentsGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					cancel(fmt.Errorf("create deployment %s/%s: %w", ns, obj.GetName(), err))
				}
			}
		})
	}
	feedN(ctx, next, count)
	wg.Wait()
	return context.Cause(ctx) // nil unless a create failed
}

// feedN hands out 0 … count-1 until done or ctx is cancelled, then closes next.
func feedN(ctx context.Context, next chan<- int, count int) {
	defer close(next)
	for i := range count {
		select {
		case next <- i:
		case <-ctx.Done():
			return
		}
	}
}

func createNamespace(ctx context.Context, dyn dynamic.Interface, name string) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name}}}
	if _, err := dyn.Resource(namespacesGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}
