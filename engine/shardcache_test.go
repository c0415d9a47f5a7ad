package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
	"github.com/jsinformer/jsinformer/status"
)

// gatedServer is the API server of the gate-on cases, on the package's etcd, shared by the
// tests that need it (started by the first, stopped by TestMain's Exit): one with
// ShardedListAndWatch on, or, where the control plane's release does not know the gate (make
// test-compat's older ones), the package's own, which ignores shardSelector.
var gatedServer struct {
	once sync.Once
	s    *controlplane.ShardedList
	err  error
}

// shardedListServer returns the API server of the gate-on cases; where it does not serve the
// gate it says so in the test's log.
func shardedListServer(t *testing.T) *controlplane.ShardedList {
	t.Helper()
	cp := controlplane.Require(t, env)
	gatedServer.once.Do(func() {
		gatedServer.s, gatedServer.err = cp.StartShardedList(t.Context())
	})
	if gatedServer.err != nil {
		t.Fatal(gatedServer.err)
	}
	if !gatedServer.s.Served {
		t.Logf("kube-apiserver %s does not know %s: the gate-on case runs on a server without it and wants the fallback", gatedServer.s.Version, controlplane.ShardedListAndWatch)
	}
	return gatedServer.s
}

// shardedListConfig is the config of the gate-on cases' API server and the filtering mode a
// partitioned informer gets there: "server", or "client" where the release lacks the gate.
func shardedListConfig(t *testing.T) (*rest.Config, string) {
	t.Helper()
	if s := shardedListServer(t); s.Served {
		return s.Config, "server"
	}
	return gatedServer.s.Config, "client"
}

// shardCacheScript handles every ConfigMap labelled sc=label. An update looks up its own
// namespace in ctx.cache and throws unless it holds perNS objects, or, for an object whose
// data.probe is "all", lists every namespace (which a partitioned cache must refuse).
func shardCacheScript(label string, perNS int) string {
	return fmt.Sprintf(`export default {
  watch: { resource: "v1/configmaps", labelSelector: "sc=%s" },
  onAdd(obj, ctx) {},
  onUpdate(oldObj, obj, ctx) {
    if (obj.data && obj.data.probe === "all") { ctx.cache.list({}); return; }
    const n = ctx.cache.list({ namespace: obj.metadata.namespace }).length;
    if (n !== %d) throw new Error("saw " + n + " objects in " + obj.metadata.namespace);
    log.info("changed", { gen: obj.data.gen });
  },
};`, label, perNS)
}

// informerObjects is how many objects r's informer of label caches, and its shard mode.
func informerObjects(st status.Status, label string) (objects int, mode string) {
	for _, inf := range st.Informers {
		if inf.LabelSelector == "sc="+label && inf.Shard != nil {
			return inf.Objects, inf.Shard.Mode
		}
	}
	return -1, ""
}

// checkShardSeen: the status of a replica under --shard-cache names its one partition, the
// one its partitioned informer caches, counts script s.js's cached objects as the informer
// does, and the informer's bytes received.
func checkShardSeen(t *testing.T, id string, st status.Status, label string, objects int) {
	t.Helper()
	var inf status.InformerStatus
	for _, i := range st.Informers {
		if i.LabelSelector == "sc="+label && i.Shard != nil {
			inf = i
		}
	}
	switch {
	case st.Shard == nil || inf.Shard == nil:
		t.Errorf("%s: no shard status (%v) or partitioned informer (%+v)", id, st.Shard, inf)
	case len(st.Shard.Partitions) != 1 || st.Shard.Partitions[0] != inf.Shard.Partition:
		t.Errorf("%s: status names partitions %q, want its informer's %q", id, st.Shard.Partitions, inf.Shard.Partition)
	case st.Shard.Cached["s.js"] != objects:
		t.Errorf("%s: status counts %d cached objects for s.js, want the %d its informer caches", id, st.Shard.Cached["s.js"], objects)
	case inf.BytesReceived == 0:
		t.Errorf("%s: the partitioned informer received 0 bytes", id)
	}
}

// Three replicas with --shard-cache, on an API server that filters (gate on) and one that
// does not (the runner filters): each caches only the namespaces it owns and handles each
// object once; a lookup in its namespace answers as a full cache would, one over every
// namespace throws; when one replica stops, the others cache its namespaces and handle every
// change made after the move once. On a release without the gate (make test-compat) the
// gate-on case runs on a server without it and wants the gate-off case's results.
func TestShardCacheByNamespace(t *testing.T) {
	t.Parallel()
	forEachGate(t, testShardCache)
}

// forEachGate runs test, in parallel, against an API server with ShardedListAndWatch on
// (wanting "server" filtering, or the fallback on a release without the gate) and one with
// it off (wanting "client").
func forEachGate(t *testing.T, test func(t *testing.T, cfg *rest.Config, wantMode string)) {
	for _, gate := range []bool{true, false} {
		name := map[bool]string{true: "gate on", false: "gate off"}[gate]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, mode := controlplane.Require(t, env).Config, "client"
			if gate {
				cfg, mode = shardedListConfig(t)
			}
			test(t, cfg, mode)
		})
	}
}

func testShardCache(t *testing.T, cfg *rest.Config, wantMode string) {
	const perNS = 4
	base := fmt.Sprintf("sc%d", time.Now().UnixNano()%1e9)
	label := base
	dyn := dynamic.NewForConfigOrDie(cfg)
	mk := &runner{dyn: dyn}
	leases := mk.namespace(t, "lease-"+base)
	scripts := map[string]string{"s.js": shardCacheScript(label, perNS)}
	replicas := map[string]*runner{}
	regs := map[string]*prometheus.Registry{}
	for _, id := range []string{"a", "b", "c"} {
		regs[id] = prometheus.NewRegistry()
		replicas[id] = startEngineOn(t, controlplane.Require(t, env), scripts, func(c *engine.Config) {
			c.RESTConfig = cfg
			shardedAs(leases, "ring", id)(c)
			c.ShardCache = true
			c.Registerer = regs[id]
		})
	}
	// The namespaces come once the ring has its plan, two for each replica: the plan's layout
	// places namespaces made after it.
	plan := waitPlan(t, cfg, leases, "a", "b", "c")
	namespaces := spreadNamespaces(plan, base, 2)
	var keys []string
	for _, ns := range namespaces {
		mk.namespace(t, ns)
		for i := range perNS {
			name := fmt.Sprintf("cm-%d", i)
			mk.create(t, configmapsGVR, configmap(ns, name, map[string]any{"sc": label}, nil))
			keys = append(keys, ns+"/"+name)
		}
	}
	waitCached(t, replicas, plan, label, namespaces, perNS, wantMode)
	for id, r := range replicas {
		objects, _ := informerObjects(r.engine.Status(), label)
		if got := metricValue(t, regs[id], "jsinformer_shard_cached_objects", map[string]string{"script": "s.js"}); got != float64(objects) {
			t.Errorf("%s: jsinformer_shard_cached_objects = %v, want the %d objects its informer caches", id, got, objects)
		}
		checkShardSeen(t, id, r.engine.Status(), label, objects)
	}

	// Every change is handled once, by the owner of its namespace, whose lookup of its own
	// namespace answers as a full cache would (the script throws otherwise).
	changeEach(t, mk, replicas, plan, keys, "1")
	// A lookup over every namespace throws.
	probeNS := namespaces[0]
	owner := replicas[nsOwner(plan, probeNS)]
	mk.patch(t, configmapsGVR, probeNS, "cm-1", `{"data":{"probe":"all"}}`)
	got := owner.calls.waitFor(t, "the lookup over every namespace", 1, call{Script: "s.js", Event: "update", Object: probeNS + "/cm-1", Result: "error"}.match)
	if !strings.Contains(got[0].Error, "outside this replica's cache partition") {
		t.Errorf("a list over every namespace failed with %q, want it refused as outside the partition", got[0].Error)
	}

	// b stops: a and c cache its namespaces, and handle each change made after the move once.
	if stopped, err := replicas["b"].stop(30 * time.Second); !stopped || err != nil {
		t.Fatalf("b stopped %v, err %v", stopped, err)
	}
	delete(replicas, "b")
	plan = waitPlan(t, cfg, leases, "a", "c")
	waitCached(t, replicas, plan, label, namespaces, perNS, wantMode)
	changeEach(t, mk, replicas, plan, keys, "2")
}

// changeEach sets data.gen of every object of keys to gen, and checks that each change is
// handled once among replicas, by the replica plan gives its namespace.
func changeEach(t *testing.T, mk *runner, replicas map[string]*runner, plan *shardrange.Plan, keys []string, gen string) {
	t.Helper()
	for _, key := range keys {
		ns, name, _ := strings.Cut(key, "/")
		mk.patch(t, configmapsGVR, ns, name, `{"data":{"gen":"`+gen+`","probe":null}}`)
	}
	for _, key := range keys {
		ns, _, _ := strings.Cut(key, "/")
		ownerID := nsOwner(plan, ns)
		changed := call{Script: "s.js", Event: "update", Object: key, Result: "ok", Logged: "changed", Attrs: map[string]string{"gen": gen}}.match
		replicas[ownerID].calls.waitFor(t, "the change of "+key+" on "+ownerID, 1, changed)
		var by []string // the replica and the call record of each handling, for a failure
		for id, r := range replicas {
			for _, c := range r.calls.find(changed) {
				by = append(by, fmt.Sprintf("%s: %+v", id, c))
			}
		}
		if len(by) != 1 {
			t.Errorf("the change of %s to gen %s was handled %d times, want once: %v", key, gen, len(by), by)
		}
	}
}

// waitCached waits until each replica's partitioned informer caches exactly the objects of
// the namespaces plan gives it, filtered in wantMode.
func waitCached(t *testing.T, replicas map[string]*runner, plan *shardrange.Plan, label string, namespaces []string, perNS int, wantMode string) {
	t.Helper()
	ring := plan.Ring()
	for id, r := range replicas {
		want := perNS * len(owned(plan, id, namespaces))
		waitStatus(t, r.engine, fmt.Sprintf("%s caching its %d objects in ring %v (%s)", id, want, ring, wantMode), func(st status.Status) bool {
			objects, mode := informerObjects(st, label)
			return st.Shard != nil && slices.Equal(st.Shard.Members, []string(ring)) && !st.Shard.Pending &&
				objects == want && mode == wantMode && len(st.Informers) == 1
		})
	}
}

// Under --shard-cache a script whose partitioned cache could answer wrongly is refused at
// load, naming the reason and the way out; the same script with shard: "none" loads.
func TestShardCacheRefusals(t *testing.T) {
	t.Parallel()
	base := fmt.Sprintf("scr%d", time.Now().UnixNano()%1e9)
	cms := `watch: { resource: "v1/configmaps", namespace: "` + base + `" }`
	cases := []struct {
		script, body, want string
	}{
		{"cluster.js", `watch: { resource: "v1/namespaces" }, onAdd() {}`, "v1/namespaces is cluster-scoped and cannot be partitioned by namespace"},
		{"admit.js", cms + `, validate(obj) {}`, "admission (validate, mutate, audit) is served by every replica"},
		{"collect.js", cms + `, metrics: { scr_objects: { type: "gauge", help: "objects", collect: (ctx) => [] } }`, "metric scr_objects has collect"},
		{"uid-reconcile.js", cms + `, shard: "uid", reconcile(key) {}`, `reconcile cannot be partitioned by uid`},
		{"uid.js", cms + `, shard: "uid", onAdd() {}`, ""},
		{"uid-cluster.js", `watch: { resource: "v1/namespaces" }, shard: "uid", onAdd() {}`, ""},
		{"none.js", `watch: { resource: "v1/namespaces" }, shard: "none", onAdd() {}`, ""},
		{"namespace.js", cms + `, onAdd() {}`, ""},
	}
	scripts := map[string]string{}
	for _, c := range cases {
		scripts[c.script] = "export default { " + c.body + " };"
	}
	mk := &runner{dyn: dynamic.NewForConfigOrDie(controlplane.Require(t, env).Config)}
	leases := mk.namespace(t, base)
	r := startEngine(t, scripts, func(c *engine.Config) { shardedAs(leases, "ring", "a")(c); c.ShardCache = true })
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			s := waitScript(t, r.engine, c.script, "loaded or refused", func(s status.ScriptStatus) bool {
				_, done := lastLoad(s, status.LoadFailed, status.LoadLoaded)
				return done
			})
			load, _ := lastLoad(s, status.LoadFailed, status.LoadLoaded)
			switch {
			case c.want == "" && load.Result != status.LoadLoaded:
				t.Errorf("refused: %+v, want it loaded", load.Error)
			case c.want != "" && (load.Error == nil || !strings.Contains(load.Error.Message, c.want) || !strings.Contains(load.Error.Message, `shard: "none"`)):
				t.Errorf("load %s %+v, want refused with %q and the way out", load.Result, load.Error, c.want)
			}
		})
	}
}

// When a replica joins, the one that loses namespaces to it releases their objects: its live
// heap falls by at least half their size once its reloaded version serves. The joining
// replica is a bare ring member (it caches nothing, in this process or elsewhere), so the
// heap measured is the losing replica's alone. Not parallel: the heap is the process's.
func TestShardCacheReleasesLostNamespaces(t *testing.T) {
	const namespacesN, perNS, size = 10, 8, 200 << 10
	cp := controlplane.Require(t, env)
	base := fmt.Sprintf("scm%d", time.Now().UnixNano()%1e9)
	mk := &runner{dyn: dynamic.NewForConfigOrDie(cp.Config)}
	leases := mk.namespace(t, "lease-"+base)
	data := strings.Repeat("x", size)
	var namespaces []string
	for n := range namespacesN {
		ns := mk.namespace(t, fmt.Sprintf("n%d-%s", n, base))
		namespaces = append(namespaces, ns)
		for i := range perNS {
			blob := fmt.Sprintf("%s/%d:", ns, i) + data // distinct: the decoder shares equal values
			mk.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("cm-%d", i), map[string]any{"sc": base}, map[string]any{"blob": blob}))
		}
	}
	a := startEngineChecked(t, cp, map[string]string{"s.js": shardCacheScript(base, perNS)}, func(c *engine.Config) {
		shardedAs(leases, "ring", "a")(c)
		c.ShardCache = true
	}, false)
	waitCached(t, map[string]*runner{"a": a}, waitPlan(t, cp.Config, leases, "a"), base, namespaces, perNS, "off") // every slice: nothing to filter
	before := liveHeapAfterGC()

	bareMember(t, cp.Config, leases, "b", true)
	plan := waitPlan(t, cp.Config, leases, "a", "b")
	lost := len(owned(plan, "b", namespaces)) * perNS * size
	if lost == 0 {
		t.Fatalf("the plan of {a, b} gives b none of the %d namespaces: the test shows nothing", namespacesN)
	}
	waitCached(t, map[string]*runner{"a": a}, plan, base, namespaces, perNS, "client")

	deadline := time.Now().Add(30 * time.Second)
	for {
		after := liveHeapAfterGC()
		if after < before && before-after >= uint64(lost/2) {
			t.Logf("live heap %d MiB before b joined, %d MiB after; the namespaces a lost held %d MiB of data", before>>20, after>>20, lost>>20)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("live heap %d MiB before b joined, %d MiB after: the %d MiB of the namespaces a lost were not released",
				before>>20, after>>20, lost>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// heldMoveScript reconciles every ConfigMap labelled sc=label, logging whether its object is
// cached; an update of one named "hold" does not return until the ConfigMap gate in
// gateNS says open: yes, which holds the replica's drain of the hold's namespace.
func heldMoveScript(label, gateNS string) string {
	return fmt.Sprintf(`export default {
  watch: { resource: "v1/configmaps", labelSelector: "sc=%s" },
  onUpdate(oldObj, obj, ctx) {
    if (obj.metadata.name !== "hold") return;
    k8s.patch("v1/configmaps", %[2]q, "gate", { data: { held: "yes" } });
    for (;;) {
      const gate = k8s.get("v1/configmaps", %[2]q, "gate");
      if (gate.data && gate.data.open === "yes") return;
    }
  },
  reconcile(key, ctx) {
    const [ns, name] = key.split("/");
    log.info("reconciled", { exists: ctx.cache.get(ns, name) !== null });
  },
};`, label, gateNS)
}

// A namespace moves while its old owner drains (a call on one of its keys in flight): the new
// owner lists it as soon as it observes the new ring, before it gains it, so an object deleted
// meanwhile is reconciled there, once gained, and seen gone.
func TestShardCacheReconcilesDeletionDuringMove(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	base := fmt.Sprintf("scd%d", time.Now().UnixNano()%1e9)
	// The plan's namespaces are fixed, so the test knows before b joins which namespace a
	// will give it: the plans a makes are these (shardrange.NewPlan is deterministic).
	var moving []string
	for n := range 4 {
		moving = append(moving, fmt.Sprintf("n%d-%s", n, base))
	}
	alone := shardrange.NewPlan(sharding.NewRing("a"), moving, nil)
	predicted := shardrange.NewPlan(sharding.NewRing("a", "b"), moving, alone)
	mk := &runner{dyn: dynamic.NewForConfigOrDie(cp.Config)}
	leases := mk.namespace(t, "lease-"+base)
	mk.create(t, configmapsGVR, configmap(leases, "gate", nil, map[string]any{"open": "no"}))
	for _, ns := range moving {
		mk.namespace(t, ns)
	}
	gained := owned(predicted, "b", moving)
	if len(gained) == 0 {
		t.Fatalf("the plan of {a, b} gives b none of %v", moving)
	}
	x := gained[0] // the namespace b takes from a
	labels := map[string]any{"sc": base}
	mk.create(t, configmapsGVR, configmap(x, "hold", labels, nil))
	mk.create(t, configmapsGVR, configmap(x, "victim", labels, nil))
	scripts := map[string]string{"s.js": heldMoveScript(base, leases)}
	sharded := func(id string) func(*engine.Config) {
		return func(c *engine.Config) {
			shardedAs(leases, "ring", id)(c)
			c.ShardCache, c.HandlerTimeout = true, 60*time.Second
			engine.SetShardNamespacesForTest(c, func() []string { return moving })
		}
	}
	a := startEngine(t, scripts, sharded("a"))
	openGate := func(ctx context.Context) error {
		_, err := mk.dyn.Resource(configmapsGVR).Namespace(leases).Patch(ctx, "gate", types.MergePatchType, []byte(`{"data":{"open":"yes"}}`), metav1.PatchOptions{})
		return err
	}
	t.Cleanup(func() { _ = openGate(context.Background()) }) // before a stops: its call returns
	waitRing(t, a, 1)
	mk.patch(t, configmapsGVR, x, "hold", `{"data":{"n":"1"}}`)
	eventually(t, "a holding the update of hold", func() error {
		gate, err := mk.dyn.Resource(configmapsGVR).Namespace(leases).Get(t.Context(), "gate", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if held, _, _ := unstructured.NestedString(gate.Object, "data", "held"); held != "yes" {
			return errors.New("not held yet")
		}
		return nil
	})

	b := startEngine(t, scripts, sharded("b"))
	if owner := nsOwner(waitPlan(t, cp.Config, leases, "a", "b"), x); owner != "b" {
		t.Fatalf("the plan a made for {a, b} gives %s to %s, not to b as shardrange.NewPlan did here", x, owner)
	}
	waitStatus(t, b.engine, "b listing "+x+" before it gains it", func(st status.Status) bool {
		objects, _ := informerObjects(st, base)
		return objects == 2 && st.Shard != nil && st.Shard.Pending
	})
	mk.delete(t, configmapsGVR, x, "victim")
	waitStatus(t, b.engine, "b seeing the deletion", func(st status.Status) bool {
		objects, _ := informerObjects(st, base)
		return objects == 1
	})
	if st := b.engine.Status(); !st.Shard.Pending {
		t.Fatal("the move ended before the deletion: the test shows nothing")
	}
	if err := openGate(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitRing(t, b, 2)
	got := b.calls.waitFor(t, "b reconciling the deleted victim", 1, call{Script: "s.js", Event: "reconcile", Object: x + "/victim", Result: "ok"}.match)
	t.Logf("b reconciled %s/victim at %s: %v", x, got[0].Time.Format(time.StampMilli), got[0].Logs)
	if exists := logAttr(got[0], "reconciled", "exists"); exists != "false" {
		t.Errorf("b reconciled %s/victim seeing exists=%s, want it gone", x, exists)
	}
}

// A watch enqueue mapping to a key in another replica's namespace is refused on the event's
// replica (the owner of the key never sees the event): logged as the mapping's failure, not
// queued; one inside the replica's namespaces is reconciled.
func TestShardCacheRefusesEnqueueOutsideThePartition(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	base := fmt.Sprintf("sce%d", time.Now().UnixNano()%1e9)
	mk := &runner{dyn: dynamic.NewForConfigOrDie(cp.Config)}
	leases := mk.namespace(t, "lease-"+base)
	script := `export default {
  watch: { resource: "v1/configmaps", labelSelector: "sc=` + base + `", enqueue: (obj) => obj.data.target + "/x" },
  reconcile(key, ctx) {},
};`
	bareMember(t, cp.Config, leases, "b", true)
	a := startEngine(t, map[string]string{"s.js": script}, func(c *engine.Config) {
		shardedAs(leases, "ring", "a")(c)
		c.ShardCache = true
	})
	waitRing(t, a, 2)
	plan := waitPlan(t, cp.Config, leases, "a", "b")
	var mine, theirs string
	for _, ns := range spreadNamespaces(plan, base, 1) {
		mk.namespace(t, ns)
		if nsOwner(plan, ns) == "a" {
			mine = ns
		} else {
			theirs = ns
		}
	}
	labels := map[string]any{"sc": base}
	mk.create(t, configmapsGVR, configmap(mine, "outside", labels, map[string]any{"target": theirs}))
	mk.create(t, configmapsGVR, configmap(mine, "inside", labels, map[string]any{"target": mine}))
	a.calls.waitFor(t, "the reconcile of "+mine+"/x", 1, call{Script: "s.js", Event: "reconcile", Object: mine + "/x", Result: "ok"}.match)
	refused := a.log.waitFor(t, "the refusal of "+theirs+"/x", 1, msg("script handler failed", "handler", "watch.enqueue", "object", mine+"/outside"))
	if !strings.Contains(refused[0].attrs["error"], "outside this replica's cache partition") {
		t.Errorf("the mapping to %s/x failed with %q, want it refused as outside the partition", theirs, refused[0].attrs["error"])
	}
	if got := a.calls.find(call{Script: "s.js", Event: "reconcile", Object: theirs + "/x"}.match); len(got) > 0 {
		t.Errorf("%s/x, another replica's key, was reconciled here: %+v", theirs, got)
	}
}

// A replica keeps handling the keys it is to lose until their new owner has listed them: b
// joins but has not listed its caches, so a still handles b's namespace, and a deletion there
// meanwhile runs a's onDelete (without the wait, a would have stopped handling the namespace
// and b, not watching it yet, would never see the deletion). Once b lists, the move ends and a
// caches only its own namespace.
func TestShardCacheOldOwnerHandlesUntilTheNewOneListed(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	base := fmt.Sprintf("scl%d", time.Now().UnixNano()%1e9)
	mk := &runner{dyn: dynamic.NewForConfigOrDie(cp.Config)}
	leases := mk.namespace(t, "lease-"+base)
	var namespaces []string
	for n := range 10 {
		ns := mk.namespace(t, fmt.Sprintf("n%d-%s", n, base))
		namespaces = append(namespaces, ns)
		mk.create(t, configmapsGVR, configmap(ns, "victim", map[string]any{"sc": base}, nil))
	}
	script := `export default {
  watch: { resource: "v1/configmaps", labelSelector: "sc=` + base + `" },
  onDelete(obj, ctx) { log.info("deleted", { name: obj.metadata.name }); },
};`
	a := startEngine(t, map[string]string{"s.js": script}, func(c *engine.Config) {
		shardedAs(leases, "ring", "a")(c)
		c.ShardCache = true
	})
	waitCached(t, map[string]*runner{"a": a}, waitPlan(t, cp.Config, leases, "a"), base, namespaces, 1, "off")

	b := bareMember(t, cp.Config, leases, "b", false)
	waitStatus(t, a.engine, "a moving to a ring of 2", func(st status.Status) bool {
		return st.Shard != nil && st.Shard.Pending
	})
	plan := waitPlan(t, cp.Config, leases, "a", "b")
	theirs, mine := owned(plan, "b", namespaces), owned(plan, "a", namespaces)
	if len(theirs) == 0 || len(mine) == 0 {
		t.Fatalf("the plan of {a, b} gives b %v and a %v: the test shows nothing", theirs, mine)
	}
	mk.delete(t, configmapsGVR, theirs[0], "victim")
	a.calls.waitFor(t, "a handling the deletion in "+theirs[0]+" while b has not listed it", 1,
		call{Script: "s.js", Event: "delete", Object: theirs[0] + "/victim", Result: "ok"}.match)
	if st := a.engine.Status(); !st.Shard.Pending || len(st.Shard.Members) != 1 {
		t.Fatalf("a's ring %+v: the move ended before b listed", st.Shard)
	}

	eventually(t, "b moving to the ring of 2", func() error {
		if target := b.Target(); len(target.Ring) != 2 {
			return fmt.Errorf("b moves to %v", target.Ring)
		}
		return nil
	})
	b.SetListed(b.Target().Fingerprint())
	waitRing(t, a, 2)
	waitStatus(t, a.engine, "a caching only its own namespaces", func(st status.Status) bool {
		objects, mode := informerObjects(st, base)
		return objects == len(mine) && mode == "client" // their victims, filtered: no longer every slice
	})
}
