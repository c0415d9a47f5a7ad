package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/shardrange"
)

// shardCacheScript is shardScript over the ConfigMaps labelled shardcache=NAMESPACE in every
// namespace.
var shardCacheScript = strings.Replace(shardScript, `watch: { resource: "v1/configmaps", namespace: "NAMESPACE" }`,
	`watch: { resource: "v1/configmaps", labelSelector: "shardcache=NAMESPACE" }`, 1)

// uidCacheScript is shardCacheScript partitioned by uid.
var uidCacheScript = strings.Replace(shardCacheScript, `watch: {`, `shard: "uid", watch: {`, 1)

// Three runner processes with --sharded --shard-cache, on an API server that filters (gate
// on) and one that does not, partitioned by namespace and by uid: each caches only the
// objects of the slices the ring's plan (read from the Leases) gives it, filtered where
// expected, and handles each object once, the one owning its namespace (or uid); after
// kill -9 of one, and then with a replica added, each caches its slices in the new ring's
// plan, and every change made after the move is handled once, by its new owner. On a
// release without the gate (make test-compat) the gate-on cases run on a server without it
// and want the gate-off cases' results.
func TestShardCacheReplicas(t *testing.T) {
	cp := controlplane.Require(t, env)
	for _, mode := range []string{"namespace", "uid"} {
		t.Run(mode+"/gate off", func(t *testing.T) { testShardCacheReplicas(t, cp, cp.Kubeconfig, false, mode) })
		t.Run(mode+"/gate on", func(t *testing.T) {
			s, err := cp.StartShardedList(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Stop() })
			if !s.Served {
				t.Logf("kube-apiserver %s does not know %s: the gate-on case runs on a server without it and wants the fallback", s.Version, controlplane.ShardedListAndWatch)
			}
			testShardCacheReplicas(t, cp, kubeconfigWith(t, s.Config.Host, cp.Config.BearerToken), s.Served, mode)
		})
	}
}

func testShardCacheReplicas(t *testing.T, cp *controlplane.ControlPlane, kubeconfig string, serverFilters bool, mode string) {
	script, field := shardCacheScript, shardrange.Namespace
	if mode == "uid" {
		script, field = uidCacheScript, shardrange.UID
	}
	se := newShardEnv(t, cp, script)
	ids := []string{"sc-a", "sc-b", "sc-c"}
	const perNS = 10
	nsOf := map[string]string{}  // object name -> namespace
	uidOf := map[string]string{} // object name -> uid
	ownerIn := func(plan *shardrange.Plan, name string) string {
		if mode == "uid" {
			return uidOwner(plan, uidOf[name])
		}
		return nsOwner(plan, nsOf[name])
	}
	for _, id := range ids {
		se.startWith(t, id, kubeconfig, "--shard-cache")
	}
	se.waitMembers(t, ids...)
	// The namespaces come once the ring has its plan, two for each replica: the plan's layout
	// places namespaces made after it.
	plan := se.waitPlan(t, ids...)
	var names []string
	count := map[string]int{}
	namespaces := 0
	for i := 0; namespaces < 2*len(ids); i++ {
		ns := fmt.Sprintf("n%d-%s", i, se.ns)
		if owner := nsOwner(plan, ns); count[owner] < 2 {
			count[owner]++
			namespaces++
			createNamespaceNamed(t, se, ns)
			for j := range perNS {
				name := fmt.Sprintf("cm-%d-%d", i, j)
				nsOf[name] = ns
				names = append(names, name)
			}
		}
	}
	write := func(v string, create bool, only []string) {
		for _, name := range only {
			c := se.dyn.Resource(configmaps).Namespace(nsOf[name])
			var err error
			if create {
				var obj *unstructured.Unstructured
				obj, err = c.Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": name, "namespace": nsOf[name], "labels": map[string]any{"shardcache": se.ns}},
					"data":     map[string]any{"v": v}}}, metav1.CreateOptions{})
				if err == nil {
					uidOf[name] = string(obj.GetUID())
				}
			} else {
				_, err = c.Patch(t.Context(), name, types.MergePatchType, []byte(`{"data":{"v":"`+v+`"}}`), metav1.PatchOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	write("1", true, names)
	waitCachedObjects(t, se, plan, ids, names, ownerIn, field)
	want := "0"
	if serverFilters {
		want = "1"
	}
	for _, id := range ids {
		if got := serverFiltered(t, se.replicas[id]); got != want {
			t.Errorf("%s: jsinformer_informer_shard_server_filtered = %s, want %s", id, got, want)
		}
		for _, name := range documentedMetrics(t) { // those TestServesReadinessAndMetricsThenStops leaves to sharded runners
			if strings.HasPrefix(name, "jsinformer_shard_") || strings.HasPrefix(name, "jsinformer_informer_shard_") {
				waitHTTP(t, "http://"+se.replicas[id].metrics+"/metrics", "\n"+name)
			}
		}
	}

	// Every change is handled once, by the replica caching its namespace (or uid).
	handledOnce := func(plan *shardrange.Plan, v string) {
		t.Helper()
		write(v, false, names)
		se.waitHandled(t, names, v, 60*time.Second)
		by := map[string][]shardCall{}
		for _, c := range se.allCalls(t) {
			if c.v == v {
				by[c.name] = append(by[c.name], c)
			}
		}
		failed := false
		for _, n := range names {
			if want := ownerIn(plan, n); len(by[n]) != 1 || by[n][0].replica != want {
				failed = true
				var got []string
				for _, c := range by[n] {
					got = append(got, fmt.Sprintf("%s at %s (initial %v)", c.replica, c.begin.Format(time.StampMilli), c.initial))
				}
				t.Errorf("%s/%s v=%s handled by %v, want once by %s", nsOf[n], n, v, got, want)
			}
		}
		if failed {
			dumpRingLogs(t, se)
		}
	}
	handledOnce(plan, "2")
	noOverlap(t, se.allCalls(t))
	if t.Failed() {
		t.FailNow()
	}

	c := se.replicas["sc-c"]
	c.stopped = time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
	ids = []string{"sc-a", "sc-b"}
	se.waitMembers(t, ids...)
	plan = se.waitPlan(t, ids...)
	waitCachedObjects(t, se, plan, ids, names, ownerIn, field)
	handledOnce(plan, "3")
	noOverlap(t, se.allCalls(t))

	se.startWith(t, "sc-d", kubeconfig, "--shard-cache")
	ids = []string{"sc-a", "sc-b", "sc-d"}
	se.waitMembers(t, ids...)
	plan = se.waitPlan(t, ids...)
	waitCachedObjects(t, se, plan, ids, names, ownerIn, field)
	handledOnce(plan, "4")
	noOverlap(t, se.allCalls(t))
}

// serverFiltered is r's jsinformer_informer_shard_server_filtered of its one partitioned
// informer: "1" when the API server filters, "0" when the runner does.
func serverFiltered(t *testing.T, r *shardReplica) string {
	t.Helper()
	resp, err := http.Get("http://" + r.metrics + "/metrics") //nolint:noctx // test read
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "jsinformer_informer_shard_server_filtered{") {
			return line[strings.LastIndexByte(line, ' ')+1:]
		}
	}
	t.Fatalf("%s serves no jsinformer_informer_shard_server_filtered", r.id)
	return ""
}

// createNamespaceNamed creates namespace ns for se's test.
func createNamespaceNamed(t *testing.T, se *shardEnv, ns string) {
	t.Helper()
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	_, err := se.dyn.Resource(nsGVR).Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// waitCachedObjects waits until each replica of ids reports in jsinformer_shard_cached_objects
// exactly the objects of names ownerIn gives it in plan, from one version (no reload syncing
// or draining) whose informer holds the slices plan gives it, all in one answer. The count
// alone is not enough: a replica narrows its cache by a reload after a move, and one that
// joins while a killed member's Lease still looks alive to it acts on a ring with that member
// first, then loads again; a change made during such a reload is handled by the old version
// and replayed as an initial add by the new one (seen once on v1.36.3, once in make test).
func waitCachedObjects(t *testing.T, se *shardEnv, plan *shardrange.Plan, ids, names []string, ownerIn func(*shardrange.Plan, string) string, field shardrange.Field) {
	t.Helper()
	for _, id := range ids {
		want := 0
		for _, name := range names {
			if ownerIn(plan, name) == id {
				want++
			}
		}
		slices := plan.Partition(id, field).Count()
		waitMetrics(t, "http://"+se.replicas[id].metrics+"/metrics",
			fmt.Sprintf("jsinformer_shard_cached_objects{script=\"shard.js\"} %d\n", want),
			"jsinformer_script_versions 1\n",
			fmt.Sprintf("shard=%s(%d/%d)", field.Short(), slices, shardrange.Slices))
	}
}

// waitMetrics waits until the metrics page at url holds every one of wants.
func waitMetrics(t *testing.T, url string, wants ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		body, missing := metricsText(url), ""
		for _, w := range wants {
			if !strings.Contains(body, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered with %q", url, missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metricsText is the body of the metrics page at url ("" when it does not answer).
func metricsText(url string) string {
	resp, err := http.Get(url) //nolint:noctx // test poll
	if err != nil {
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// dumpRingLogs logs the replicas' ring changes and loads, to tell why two replicas handled a
// key at once.
func dumpRingLogs(t *testing.T, se *shardEnv) {
	t.Helper()
	for id, r := range se.replicas {
		data, err := os.ReadFile(r.log)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "shard") || strings.Contains(line, "script loaded") || strings.Contains(line, "script reloaded") {
				t.Logf("%s: %s", id, line)
			}
		}
	}
}
