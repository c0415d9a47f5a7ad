package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/shardrange"
	"github.com/jsinformer/jsinformer/status"
)

// uidScript handles every ConfigMap labelled sc=label, cached by uid; an update whose
// data.probe is "lookup" looks up its own object in ctx.cache, which a uid partition refuses.
func uidScript(label string) string {
	return fmt.Sprintf(`export default {
  watch: { resource: "v1/configmaps", labelSelector: "sc=%s" },
  shard: "uid",
  onAdd(obj, ctx) {},
  onUpdate(oldObj, obj, ctx) {
    if (obj.data && obj.data.probe === "lookup") { ctx.cache.get(obj.metadata.namespace, obj.metadata.name); return; }
    log.info("changed", { gen: obj.data.gen });
  },
};`, label)
}

// Three replicas with --shard-cache and a script declaring shard: "uid", on an API server
// that filters (gate on) and one that does not: each replica caches exactly the objects whose
// uid slices it owns (a namespace's objects spread over the replicas), handles each change
// once, and refuses lookups; when one replica stops, the others cache its objects and handle
// every change made after the move once. On a release without the gate (make test-compat)
// the gate-on case runs on a server without it and wants the gate-off case's results.
func TestShardCacheByUID(t *testing.T) {
	t.Parallel()
	forEachGate(t, testShardCacheByUID)
}

func testShardCacheByUID(t *testing.T, cfg *rest.Config, wantMode string) {
	const perNS = 12
	base := fmt.Sprintf("su%d", time.Now().UnixNano()%1e9)
	mk := &runner{dyn: dynamic.NewForConfigOrDie(cfg)}
	leases := mk.namespace(t, "lease-"+base)
	uids := map[string]string{} // key → uid
	var keys []string
	for n := range 2 {
		ns := mk.namespace(t, fmt.Sprintf("%s-%d", base, n))
		for i := range perNS {
			name := fmt.Sprintf("cm-%d", i)
			obj := mk.create(t, configmapsGVR, configmap(ns, name, map[string]any{"sc": base}, nil))
			keys = append(keys, ns+"/"+name)
			uids[ns+"/"+name] = string(obj.GetUID())
		}
	}
	scripts := map[string]string{"s.js": uidScript(base)}
	replicas := map[string]*runner{}
	for _, id := range []string{"a", "b", "c"} {
		replicas[id] = startEngineOn(t, controlplane.Require(t, env), scripts, func(c *engine.Config) {
			c.RESTConfig = cfg
			shardedAs(leases, "ring", id)(c)
			c.ShardCache = true
		})
	}
	plan := waitPlan(t, cfg, leases, "a", "b", "c")
	waitCachedByUID(t, replicas, plan, base, uids, wantMode)
	changeEachByUID(t, mk, replicas, plan, keys, uids, "1")

	probe := keys[0]
	ns, name, _ := strings.Cut(probe, "/")
	mk.patch(t, configmapsGVR, ns, name, `{"data":{"probe":"lookup"}}`)
	got := replicas[uidOwner(plan, uids[probe])].calls.waitFor(t, "the lookup", 1, call{Script: "s.js", Event: "update", Object: probe, Result: "error"}.match)
	if !strings.Contains(got[0].Error, "outside this replica's cache partition") {
		t.Errorf("a lookup in a uid partition failed with %q, want it refused as outside the partition", got[0].Error)
	}

	if stopped, err := replicas["b"].stop(30 * time.Second); !stopped || err != nil {
		t.Fatalf("b stopped %v, err %v", stopped, err)
	}
	delete(replicas, "b")
	plan = waitPlan(t, cfg, leases, "a", "c")
	waitCachedByUID(t, replicas, plan, base, uids, wantMode)
	changeEachByUID(t, mk, replicas, plan, keys, uids, "2")
}

// waitCachedByUID waits until each replica's partitioned informer caches exactly the objects
// whose uids plan gives it, filtered in wantMode, and checks the objects spread: no replica
// holds every namespace's objects whole.
func waitCachedByUID(t *testing.T, replicas map[string]*runner, plan *shardrange.Plan, label string, uids map[string]string, wantMode string) {
	t.Helper()
	for id, r := range replicas {
		want := 0
		for _, uid := range uids {
			if uidOwner(plan, uid) == id {
				want++
			}
		}
		if want == 0 || want == len(uids) {
			t.Fatalf("%s owns %d of the %d uids: the test shows no partition", id, want, len(uids))
		}
		waitStatus(t, r.engine, fmt.Sprintf("%s caching its %d objects in ring %v (%s, by uid)", id, want, plan.Ring(), wantMode), func(st status.Status) bool {
			objects, mode := informerObjects(st, label)
			return st.Shard != nil && !st.Shard.Pending && objects == want && mode == wantMode
		})
	}
}

// changeEachByUID sets data.gen of every object of keys to gen, and checks that each change
// is handled once among replicas, by the replica plan gives its uid.
func changeEachByUID(t *testing.T, mk *runner, replicas map[string]*runner, plan *shardrange.Plan, keys []string, uids map[string]string, gen string) {
	t.Helper()
	for _, key := range keys {
		ns, name, _ := strings.Cut(key, "/")
		mk.patch(t, configmapsGVR, ns, name, `{"data":{"gen":"`+gen+`","probe":null}}`)
	}
	for _, key := range keys {
		changed := call{Script: "s.js", Event: "update", Object: key, Result: "ok", Logged: "changed", Attrs: map[string]string{"gen": gen}}.match
		replicas[uidOwner(plan, uids[key])].calls.waitFor(t, "the change of "+key, 1, changed)
		total := 0
		for _, r := range replicas {
			total += len(r.calls.find(changed))
		}
		if total != 1 {
			t.Errorf("the change of %s to gen %s was handled %d times, want once", key, gen, total)
		}
	}
}
