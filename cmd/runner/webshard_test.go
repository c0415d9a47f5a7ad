package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/internal/browsertest"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/shardrange"
	"github.com/jsinformer/jsinformer/status"
)

// TestWebPageShowsSharding drives the web page of two runner processes with --sharded
// --shard-cache on an API server that filters (gate on): each page's informers view shows the
// ring's members, the ranges the replica caches, its partitioned informer with its partition,
// "server" filtering and why, the objects received and kept and the bytes received, and the
// objects its partitioned script caches: the replica's own figures, as its status says.
func TestWebPageShowsSharding(t *testing.T) {
	cp := controlplane.Require(t, env)
	x, err := cp.StartExtraAPIServer(t.Context(), "--feature-gates=ShardedListAndWatch=true")
	if err != nil {
		t.Fatalf("start a kube-apiserver with ShardedListAndWatch on: %v", err)
	}
	t.Cleanup(func() { _ = x.Stop() })
	kubeconfig := kubeconfigWith(t, x.Config.Host, cp.Config.BearerToken)
	se := newShardEnv(t, cp, shardCacheScript)
	ids := []string{"web-a", "web-b"}
	debug := map[string]string{}
	for _, id := range ids {
		debug[id] = freeAddr(t)
		se.startWith(t, id, kubeconfig, "--shard-cache", "--debug-addr", debug[id])
	}
	se.waitMembers(t, ids...)
	// The namespaces come once the ring has its plan, until each replica owns one: the plan's
	// layout places namespaces made after it.
	plan := se.waitPlan(t, ids...)
	nsOf := map[string]string{} // object name -> namespace
	var names []string
	owned := map[string]int{}
	for i := 0; owned[ids[0]] == 0 || owned[ids[1]] == 0; i++ {
		ns := fmt.Sprintf("w%d-%s", i, se.ns)
		createNamespaceNamed(t, se, ns)
		owned[nsOwner(plan, ns)] += 3
		for j := range 3 {
			name := fmt.Sprintf("cm-%d-%d", i, j)
			nsOf[name] = ns
			names = append(names, name)
			_, err := se.dyn.Resource(configmaps).Namespace(ns).Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns,
					"labels": map[string]any{"shardcache": se.ns}}, "data": map[string]any{"v": "1"}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	waitCachedObjects(t, se, plan, ids, names, func(plan *shardrange.Plan, name string) string { return nsOwner(plan, nsOf[name]) }, shardrange.Namespace)

	b := browsertest.New(t)
	for _, id := range ids {
		base := "http://" + debug[id]
		st, inf := settledShardStatus(t, base, id, owned[id])
		want, err := json.Marshal(map[string]any{"id": id, "members": ids, "partition": st.Shard.Partitions[0], "informer": inf.Shard, "cached": owned[id]})
		if err != nil {
			t.Fatal(err)
		}
		b.Do(t, "open "+id+"'s informers view", chromedp.Navigate(base+"/informers"))
		b.WaitJS(t, id+"'s sharding section shows its ring, ranges, partitioned informer and cached objects", `(() => {
			const want = `+string(want)+`;
			const text = (sel) => document.querySelector(sel)?.textContent ?? "";
			const row = document.querySelector('#shard-informers tbody tr[data-mode="server"]');
			const cached = [...document.querySelectorAll("#shard-cached tbody tr")].find((r) => r.cells[0].textContent === "shard.js");
			return text("#shard-ring").includes(want.id) && want.members.every((m) => text("#shard-members").includes(m)) &&
				text("#shard-partitions").includes(want.partition) &&
				!!row && row.dataset.mode === "server" && row.cells[2].textContent === want.informer.partition &&
				row.cells[4].textContent === want.informer.reason && row.cells[5].textContent === String(want.informer.received) &&
				row.cells[6].textContent === String(want.informer.kept) && /[0-9] (KiB|MiB)$/.test(row.cells[7].textContent) &&
				!!cached && cached.cells[1].textContent === String(want.cached);
		})()`, 30*time.Second)
		b.Screenshot(t, "page-sharding-"+id)
	}
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the page logged errors: %q", errs)
	}
}

// settledShardStatus polls replica id's status (its debug API at base) until the ring change
// has settled: one partition, its partitioned script caching the owned objects, and one
// informer filtered by the API server, which it returns with the status.
func settledShardStatus(t *testing.T, base, id string, owned int) (status.Status, status.InformerStatus) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st status.Status
		getJSON(t, base+"/debug/status", &st)
		var parts []status.InformerStatus
		for _, i := range st.Informers {
			if i.Shard != nil {
				parts = append(parts, i)
			}
		}
		if st.Shard != nil && len(st.Shard.Partitions) == 1 && st.Shard.Cached["shard.js"] == owned && len(parts) == 1 && parts[0].Shard.Mode == "server" {
			return st, parts[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status shard %+v, partitioned informers %+v; want one partition, %d objects cached by shard.js, one informer filtered by the server", id, st.Shard, parts, owned)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
