package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
)

// Script metric families on the runner's /metrics, as Prometheus scrapes them.

// scrapeTimed is one GET of /metrics on addr: its status, how long it took, and its samples by
// series ("name" or "name{labels}", as the text exposition writes them).
func scrapeTimed(t *testing.T, addr string) (status int, took time.Duration, samples map[string]float64) {
	t.Helper()
	start := time.Now()
	resp, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // test read
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	took = time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	samples = map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			samples[line[:i]] = v
		}
	}
	return resp.StatusCode, took, samples
}

// families is the metric names samples has series of.
func families(samples map[string]float64) map[string]bool {
	out := map[string]bool{}
	for s := range samples {
		name, _, _ := strings.Cut(s, "{")
		out[name] = true
	}
	return out
}

func collectScript(ns, family string) string {
	return `export default {
  watch: { resource: "v1/configmaps", namespace: "` + ns + `" },
  metrics: { ` + family + `: { type: "gauge", help: "ConfigMaps", collect: (ctx) => [{ value: ctx.cache.list().length }] } },
  onAdd() {},
};
`
}

// A paused script's collect never answers: /metrics still answers 200 within 2s with every
// other family (the other script's, the runner's, go_ and process_), counts the paused one
// busy, and serves it again after resume.
func TestMetricsServedWhileAScriptIsPaused(t *testing.T) {
	// Not parallel: runners in one process share klog's global logger.
	cp := controlplane.Require(t, env)
	le := &leaderEnv{scripts: t.TempDir(), ns: fmt.Sprintf("paused-metrics-%d", time.Now().UnixNano()), dyn: dynamic.NewForConfigOrDie(cp.Config)}
	le.create(t, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": le.ns}})
	le.configmap(t, "one")
	writeScript(t, le.scripts, "paused.js", collectScript(le.ns, "test_paused_configmaps"))
	writeScript(t, le.scripts, "other.js", collectScript(le.ns, "test_other_configmaps"))
	metrics, debug := freeAddr(t), freeAddr(t)
	out, _ := startRunner(t, "--kubeconfig", cp.Kubeconfig, "--scripts", le.scripts, "--metrics-addr", metrics, "--debug-addr", debug)
	waitOutput(t, out, "msg=ready")
	waitHTTP(t, "http://"+metrics+"/metrics", "test_paused_configmaps 1")

	ctl := func(verb string) {
		if msg, err := execute(t, t.Context(), verb, "paused.js", "--debug-addr", debug); err != nil {
			t.Fatalf("runner %s paused.js: %v\n%s", verb, err, msg)
		}
	}
	ctl("pause")
	const busy = `jsinformer_script_metric_errors_total{metric="test_paused_configmaps",reason="busy",script="paused.js"}`
	for i := range 3 {
		status, took, samples := scrapeTimed(t, metrics)
		got := families(samples)
		t.Logf("scrape %d while paused: %d in %v", i, status, took.Round(time.Millisecond))
		if status != http.StatusOK || took > 2*time.Second {
			t.Fatalf("scrape %d while paused answered %d in %v, want 200 within 2s", i, status, took)
		}
		for _, want := range []string{"test_other_configmaps", "jsinformer_ready", "jsinformer_handler_calls_total", "go_goroutines", "process_cpu_seconds_total"} {
			if !got[want] {
				t.Errorf("scrape %d while paused serves no %s", i, want)
			}
		}
		if got["test_paused_configmaps"] {
			t.Errorf("scrape %d serves the paused script's family", i)
		}
		// The counter is gathered beside the collects: a scrape shows the scrapes' before it.
		if samples[busy] < float64(i) {
			t.Errorf("scrape %d: %s = %v, want ≥ %d", i, busy, samples[busy], i)
		}
	}
	ctl("resume")
	waitHTTP(t, "http://"+metrics+"/metrics", "test_paused_configmaps 1")
}

// Two sharded replicas against one control plane: each collect family is computed and
// served by one replica only (the owner of its key), so summing a family over the replicas
// counts every object once; when that replica goes, the other serves the family.
func TestShardedReplicasServeEachFamilyOnce(t *testing.T) {
	cp := controlplane.Require(t, env)
	const objects, nFamilies = 12, 6
	var decl []string
	for i := range nFamilies {
		decl = append(decl, fmt.Sprintf(`test_sharded_configmaps_%d: { type: "gauge", help: "ConfigMaps", collect: (ctx) => [{ value: ctx.cache.list().length }] },`, i))
	}
	se := newShardEnv(t, cp, `export default {
  watch: { resource: "v1/configmaps", namespace: "NAMESPACE" },
  metrics: {
    `+strings.Join(decl, "\n    ")+`
  },
  onAdd() {},
};`)
	for i := range objects {
		se.configmap(t, objectName(i))
	}
	ids := []string{"metrics-a", "metrics-b"}
	for _, id := range ids {
		se.start(t, id)
	}
	se.waitMembers(t, ids...)

	ring := sharding.NewRing(ids...)
	owner := map[string]string{} // family → replica
	for i := range nFamilies {
		family := fmt.Sprintf("test_sharded_configmaps_%d", i)
		owner[family] = ring.Owner("metric:shard.js#" + family)
	}
	served := func(id string) map[string]float64 {
		status, _, samples := scrapeTimed(t, se.replicas[id].metrics)
		if status != http.StatusOK {
			t.Fatalf("%s /metrics answered %d", id, status)
		}
		return samples
	}
	// check compares what the replicas up serve with want (family → replica serving it).
	check := func(up []string, want map[string]string) string {
		sums := map[string]float64{}
		var problems []string
		for _, id := range up {
			samples := served(id)
			for family := range owner {
				v, ok := samples[family]
				if ok != (want[family] == id) {
					problems = append(problems, fmt.Sprintf("%s serves %s: %v, its owner is %s", id, family, ok, want[family]))
				}
				sums[family] += v
			}
		}
		for family, sum := range sums {
			if sum != objects {
				problems = append(problems, fmt.Sprintf("sum(%s) over the replicas = %v, want %d", family, sum, objects))
			}
		}
		return strings.Join(problems, "; ")
	}
	eventuallyEmpty := func(what string, f func() string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			problems := f()
			if problems == "" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s", what, problems)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	byReplica := map[string]int{}
	for _, id := range owner {
		byReplica[id]++
	}
	if len(byReplica) != len(ids) {
		t.Fatalf("the ring gives every family to one replica (%v): the test would show nothing", byReplica)
	}
	eventuallyEmpty("two replicas", func() string { return check(ids, owner) })

	b := se.replicas["metrics-b"]
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-b.done
	se.waitMembers(t, "metrics-a")
	all := map[string]string{}
	for family := range owner {
		all[family] = "metrics-a"
	}
	eventuallyEmpty("metrics-a alone", func() string { return check([]string{"metrics-a"}, all) })
}
