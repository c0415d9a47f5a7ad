package engine_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// The outage tests kill and restart kube-apiserver, so they run on a control plane of their
// own, with a second kube-apiserver on the same etcd that takes writes while the first is down.

// tallyScript keeps name=uid of every configmap it has been shown in one namespace and logs
// that view after each event; deletes log whether the final state was unknown.
const tallyScript = `
const seen = {};
function report() {
  log.info("view", { view: Object.keys(seen).sort().map((k) => k + "=" + seen[k]).join(",") });
}
export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  onAdd(cm) { seen[cm.metadata.name] = cm.metadata.uid; report(); },
  onUpdate(o, n) {
    if (o.metadata.uid !== n.metadata.uid) log.error("an update joined two objects", { name: n.metadata.name });
    seen[n.metadata.name] = n.metadata.uid; report();
  },
  onDelete(cm, ctx) {
    if (seen[cm.metadata.name] === cm.metadata.uid) delete seen[cm.metadata.name];
    log.info("deleted", { name: cm.metadata.name, uid: cm.metadata.uid, unknown: ctx.finalStateUnknown });
    report();
  },
};`

// outageEnv is a dedicated control plane, an extra apiserver on its etcd, and a runner.
type outageEnv struct {
	cp    *controlplane.ControlPlane
	extra dynamic.Interface
	r     *runner
	reg   *prometheus.Registry
	ns    string
}

func startOutageEnv(t *testing.T) *outageEnv {
	t.Helper()
	controlplane.Require(t, env) // the shared one is not used, but -short skips here too
	cp, err := controlplane.Start(t.Context(), controlplane.Options{})
	if err != nil {
		t.Fatalf("start a control plane for outages: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	x, err := cp.StartExtraAPIServer(t.Context())
	if err != nil {
		t.Fatalf("start a second kube-apiserver: %v", err)
	}
	o := &outageEnv{cp: cp, extra: dynamic.NewForConfigOrDie(x.Config), reg: prometheus.NewRegistry(), ns: uniqueName("outage")}
	o.r = startEngineOn(t, cp, map[string]string{"outage.js": fmt.Sprintf(tallyScript, o.ns)}, func(c *engine.Config) {
		c.UnhealthyAfter = time.Second
		c.Registerer = o.reg
	})
	t.Cleanup(func() { _ = x.Stop() }) // before the runner stops: LIFO
	o.r.namespace(t, o.ns)
	for i := range 5 {
		o.r.create(t, configmapsGVR, configmap(o.ns, fmt.Sprintf("c%d", i), nil, map[string]any{"v": "0"}))
	}
	o.waitConverged(t)
	return o
}

// serverView is the namespace's configmaps as name=uid, read through the extra apiserver.
func (o *outageEnv) serverView(t *testing.T) string {
	t.Helper()
	list, err := o.extra.Resource(configmapsGVR).Namespace(o.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list configmaps: %v", err)
	}
	var out []string
	for _, cm := range list.Items {
		out = append(out, cm.GetName()+"="+string(cm.GetUID()))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// scriptView is the view the script logged in its last call.
func (o *outageEnv) scriptView() string { return o.r.calls.lastLogged("outage.js", "view", "view") }

// waitConverged polls until the script's view equals the server's and returns how long it
// took.
func (o *outageEnv) waitConverged(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	want := o.serverView(t)
	for o.scriptView() != want {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the script's view never matched the server's:\nscript %s\nserver %s\n%s", o.scriptView(), want, o.r.log.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// writeDuringOutage changes the namespace through the extra apiserver: a create, an update, a
// delete, and a delete and re-create under the same name (a new uid).
func (o *outageEnv) writeDuringOutage(t *testing.T, round int) {
	t.Helper()
	ctx, cms := t.Context(), o.extra.Resource(configmapsGVR).Namespace(o.ns)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("write through the extra apiserver: %v", err)
		}
	}
	_, err := cms.Create(ctx, unstructuredOf(configmap(o.ns, fmt.Sprintf("new-%d", round), nil, nil)), metav1.CreateOptions{})
	must(err)
	_, err = cms.Patch(ctx, "c0", "application/merge-patch+json", fmt.Appendf(nil, `{"data":{"v":"%d"}}`, round), metav1.PatchOptions{})
	must(err)
	if round > 1 {
		must(cms.Delete(ctx, fmt.Sprintf("new-%d", round-1), metav1.DeleteOptions{}))
	}
	must(cms.Delete(ctx, "c2", metav1.DeleteOptions{}))
	_, err = cms.Create(ctx, unstructuredOf(configmap(o.ns, "c2", nil, map[string]any{"round": fmt.Sprint(round)})), metav1.CreateOptions{})
	must(err)
}

// outage kills kube-apiserver, writes through the other one, optionally compacts etcd, waits
// until the runner reports not ready, restarts kube-apiserver and returns how long the script
// took to see the server's state again.
func (o *outageEnv) outage(t *testing.T, round int, compact bool) time.Duration {
	t.Helper()
	if err := o.cp.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	o.writeDuringOutage(t, round)
	if compact {
		if _, err := o.cp.CompactEtcd(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, o.r.engine, false)
	if err := o.cp.RestartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	took := o.waitConverged(t)
	waitReady(t, o.r.engine, true)
	return took
}

// waitReady polls Ready until it reports want.
func waitReady(t *testing.T, e *engine.Engine, want bool) {
	t.Helper()
	err := waitReadyErr(t, e, func(err error) bool { return (err == nil) == want })
	if err != nil && (!errors.Is(err, engine.ErrNotReady) || !strings.Contains(err.Error(), "outage.js")) {
		t.Fatalf("Ready() = %v; want ErrNotReady naming the script", err)
	}
}

func TestOutagesKeepTheScriptsViewRight(t *testing.T) {
	t.Parallel()
	o := startOutageEnv(t)
	warn := msg("informer cannot list/watch; its scripts see no changes until it recovers", "scripts", "outage.js", "resource", "v1/configmaps", "namespace", o.ns)
	recovered := msg("informer recovered", "scripts", "outage.js", "namespace", o.ns)

	t.Run("single outage", func(t *testing.T) {
		took := o.outage(t, 1, false)
		t.Logf("converged %v after the apiserver was back", took)
		o.r.log.waitFor(t, "the WARN", 1, warn)
		o.r.log.waitFor(t, "the INFO", 1, recovered)
	})
	t.Run("three in a row", func(t *testing.T) {
		for round := 2; round <= 4; round++ {
			took := o.outage(t, round, false)
			t.Logf("outage %d: converged %v after the apiserver was back", round, took)
		}
		if n := len(o.r.log.find(warn)); n != 4 {
			t.Errorf("%d WARNs for 4 outages, want one each", n)
		}
		if got := o.r.log.find(recovered); len(got) != 4 {
			t.Errorf("%d recovery INFOs for 4 outages, want one each: %v", len(got), got)
		}
	})
	t.Run("compacted etcd forces a relist", func(t *testing.T) {
		before := counter(t, o.reg, "jsinformer_informer_relists_total")
		o.outage(t, 5, true)
		o.r.log.waitFor(t, "a recovery with relist", 1, msg("informer recovered", "namespace", o.ns, "relisted", "true"))
		if after := counter(t, o.reg, "jsinformer_informer_relists_total"); after <= before {
			t.Errorf("relists %v -> %v, want more", before, after)
		}
	})
	t.Run("a re-created object is a delete and an add", func(t *testing.T) {
		deletes := o.r.calls.find(func(rec inspection.TraceRecord) bool {
			return call{Script: "outage.js", Event: "delete", Object: o.ns + "/c2", Handler: "onDelete", Result: "ok"}.match(rec) && rec.FinalStateUnknown
		})
		if len(deletes) == 0 {
			t.Fatalf("c2 was re-created during outages, but no onDelete with finalStateUnknown:\n%s", o.r.calls.dump())
		}
		if joined := o.r.calls.find(call{Script: "outage.js", Logged: "an update joined two objects"}.match); len(joined) > 0 {
			t.Errorf("onUpdate was called across a uid change: %v", joined)
		}
	})
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	n, err := testutil.GatherAndCount(reg, name)
	if err != nil || n == 0 {
		t.Fatalf("metric %s: %d series, %v", name, n, err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
