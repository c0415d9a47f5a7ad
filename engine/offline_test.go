package engine_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// The Offline engine on the in-memory cluster: fast (-short), no control plane.

type offlineRun struct {
	*engine.Offline
	cluster *memcluster.Cluster
	log     *sink
	mu      sync.Mutex
	writes  []memcluster.Write
}

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func startOffline(t *testing.T, script string, objects ...*unstructured.Unstructured) *offlineRun {
	t.Helper()
	clock := clocktesting.NewFakeClock(epoch)
	cluster, err := memcluster.New(memcluster.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		gvr := deploymentsGVR
		if obj.GetKind() == "ConfigMap" {
			gvr = configmapsGVR
		}
		if _, err := cluster.Create(gvr, obj.GetNamespace(), obj, memcluster.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := &offlineRun{cluster: cluster, log: &sink{}}
	r.Offline, err = engine.NewOffline(engine.OfflineConfig{Cluster: cluster, Clock: clock, Logger: slog.New(r.log),
		OnWrite: func(w memcluster.Write) { r.mu.Lock(); r.writes = append(r.writes, w); r.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if err := r.Load(t.Context(), "script.js", []byte(script)); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *offlineRun) settle(t *testing.T, limit time.Duration) time.Duration {
	t.Helper()
	moved, err := r.Settle(t.Context(), limit)
	if err != nil {
		t.Fatal(err)
	}
	return moved
}

func (r *offlineRun) messages(msg string) int {
	return len(r.log.find(func(rec record) bool { return rec.msg == msg }))
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "examples", "scripts", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func TestOfflineRunsAnExampleToTheSameEnd(t *testing.T) {
	t.Parallel()
	labelled := unstructuredOf(deployment("default", "owned", "nginx:1", 1))
	labelled.SetLabels(map[string]string{"team": "web"})
	r := startOffline(t, readExample(t, "08-default-team-label.js"), unstructuredOf(deployment("default", "web", "nginx:1", 1)), labelled)
	r.settle(t, 0)
	got, err := r.cluster.Get(deploymentsGVR, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetLabels()["team"] != "unassigned" {
		t.Fatalf("labels %v after the initial list, want team=unassigned", got.GetLabels())
	}
	if _, err := r.cluster.Create(deploymentsGVR, "default", unstructuredOf(deployment("default", "api", "nginx:1", 1)), memcluster.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.settle(t, 0)
	var verbs []string
	for _, w := range r.writes {
		verbs = append(verbs, w.Verb+" "+w.Name)
	}
	if strings.Join(verbs, ",") != "patch web,patch api" {
		t.Fatalf("writes %v, want one patch per unlabelled deployment (the labelled one leaves the watch)", verbs)
	}
}

const requeueScript = `
export default {
  watch: "v1/configmaps",
  reconcile(key) {
    log.info("reconciled", { key, at: new Date().toISOString() });
    return { requeueAfter: "10m" };
  },
};`

func TestOfflineRequeueAfterWaitsForTheVirtualClock(t *testing.T) {
	t.Parallel()
	r := startOffline(t, requeueScript, configMap("default", "a"))
	r.settle(t, 0)
	if n := r.messages("reconciled"); n != 1 {
		t.Fatalf("%d reconciles after the initial list, want 1", n)
	}
	if err := r.Advance(t.Context(), 9*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := r.messages("reconciled"); n != 1 {
		t.Fatalf("%d reconciles 9m later, want still 1", n)
	}
	if err := r.Advance(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	recs := r.log.find(func(rec record) bool { return rec.msg == "reconciled" })
	if len(recs) != 2 || recs[1].attrs["at"] != "2030-01-01T00:10:00.000Z" {
		t.Fatalf("reconciles %v, want a second one at 00:10 virtual time", recs)
	}
	if moved := r.settle(t, 25*time.Minute); moved != 20*time.Minute {
		t.Fatalf("settle moved the clock %s, want 20m (two more requeues within 25m)", moved)
	}
}

func TestOfflineSettleRunsRetriesThroughBackoff(t *testing.T) {
	t.Parallel()
	r := startOffline(t, `
let calls = 0;
export default {
  watch: "v1/configmaps",
  reconcile(key) {
    calls++;
    log.info("attempt", { calls });
    if (calls < 3) throw new Error("not yet");
  },
};`, configMap("default", "a"))
	moved := r.settle(t, time.Hour)
	if n := r.messages("attempt"); n != 3 {
		t.Fatalf("%d attempts, want 3 (two failures retried)", n)
	}
	if moved != 15*time.Millisecond {
		t.Fatalf("clock moved %s, want 15ms (backoff 5ms then 10ms)", moved)
	}
}

func configMap(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}}
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}
