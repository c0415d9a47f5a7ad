package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// Namespaces created after a ring's plan fall where its layout puts them; when they pile up on
// one replica the ring's lowest replica plans the same ring again (every 30 retry periods,
// 15 s here) and both move to the new plan: the other replica takes some of them and each
// caches exactly its namespaces. The namespaces the plans are made from are the test's own
// (engine.SetShardNamespacesForTest: 20 names, then 16 more created on a's slices), so that
// the pile-up is the test's doing.
func TestShardCacheReplansWhenNamespacesGrow(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	base := fmt.Sprintf("srp%d", time.Now().UnixNano()%1e9)
	mk := &runner{dyn: dynamic.NewForConfigOrDie(cp.Config)}
	leases := mk.namespace(t, "lease-"+base)
	var mu sync.Mutex
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("n%d-%s", i, base))
	}
	current := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(names)
	}
	script := `export default { watch: { resource: "v1/configmaps", labelSelector: "sc=` + base + `" }, onAdd() {} };`
	replicas := map[string]*runner{}
	for _, id := range []string{"a", "b"} {
		replicas[id] = startEngine(t, map[string]string{"s.js": script}, func(c *engine.Config) {
			shardedAs(leases, "ring", id)(c)
			c.ShardCache = true
			engine.SetShardNamespacesForTest(c, current)
		})
	}
	first := waitPlan(t, cp.Config, leases, "a", "b")
	var added []string // 16 more namespaces, every one on a's slices
	for i := 20; len(added) < 16; i++ {
		if ns := fmt.Sprintf("n%d-%s", i, base); nsOwner(first, ns) == "a" {
			added = append(added, ns)
		}
	}
	for _, ns := range added {
		mk.namespace(t, ns)
		mk.create(t, configmapsGVR, configmap(ns, "cm", map[string]any{"sc": base}, nil))
	}
	waitCached(t, replicas, first, base, added, 1, "client")
	mu.Lock()
	names = append(names, added...)
	mu.Unlock()

	store := sharding.APILeases{Client: kubernetes.NewForConfigOrDie(cp.Config).CoordinationV1(), Namespace: leases, Ring: "ring"}
	var again *shardrange.Plan
	eventuallyWithin(t, 45*time.Second, "a new plan of {a, b}", func() error {
		view, err := store.Plan(t.Context())
		if err != nil {
			return err
		}
		plan, err := shardrange.DecodePlan(view.Plan)
		if err != nil {
			return err
		}
		if plan.Equal(first) {
			return errors.New("the plan is the first one")
		}
		again = plan
		return nil
	})
	all := current()
	if a, b := len(owned(again, "a", all)), len(owned(again, "b", all)); a > b+4 || b > a+4 {
		t.Fatalf("planned again, a owns %d of the %d namespaces and b %d", a, len(all), b)
	}
	if n := len(owned(again, "b", added)); n == 0 {
		t.Fatal("planned again, b owns none of the 16 namespaces that were all a's")
	}
	waitCached(t, replicas, again, base, added, 1, "client")
}
