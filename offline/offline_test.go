package offline_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/offline"
	"github.com/jsinformer/jsinformer/status"
)

// The harness on the in-memory cluster: fast, no control plane.

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configmapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

type offlineRun struct {
	*offline.Harness
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
	r.Harness, err = offline.New(offline.Config{Cluster: cluster, Clock: clock, Logger: slog.New(r.log),
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

// record is one log line a script wrote: its message and attributes.
type record struct {
	msg   string
	attrs map[string]string
}

// sink captures log records; a script's fields (its "attrs" group) are kept flat.
type sink struct {
	mu      sync.Mutex
	records []record
	parent  *sink
}

func (s *sink) root() *sink {
	if s.parent != nil {
		return s.parent.root()
	}
	return s
}

func (s *sink) Enabled(context.Context, slog.Level) bool { return true }

func (s *sink) Handle(_ context.Context, r slog.Record) error {
	rec := record{msg: r.Message, attrs: map[string]string{}}
	var add func(a slog.Attr) bool
	add = func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindGroup {
			for _, g := range a.Value.Group() {
				add(g)
			}
			return true
		}
		rec.attrs[a.Key] = a.Value.Resolve().String()
		return true
	}
	r.Attrs(add)
	root := s.root()
	root.mu.Lock()
	root.records = append(root.records, rec)
	root.mu.Unlock()
	return nil
}

func (s *sink) WithAttrs([]slog.Attr) slog.Handler { return &sink{parent: s} }
func (s *sink) WithGroup(string) slog.Handler      { return s }

func (s *sink) find(pred func(record) bool) []record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []record
	for _, r := range s.records {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

func unstructuredOf(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}

func deployment(ns, name, image string, replicas int64) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": image}}},
			},
		}}
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

// A schedule comes due on the virtual clock only: Settle never runs it, Advance runs it at
// each due time, in order, on the version's worker.
func TestOfflineScheduleFollowsTheVirtualClock(t *testing.T) {
	t.Parallel()
	r := startOffline(t, `
export default {
  watch: "v1/configmaps",
  schedule: [{ every: "1m", run(ctx) { log.info("tick", { at: new Date().toISOString(), n: ctx.cache.list().length }); } }],
};`, configMap("default", "a"))
	if moved := r.settle(t, time.Hour); moved != 0 || len(r.log.find(func(rec record) bool { return rec.msg == "tick" })) != 0 {
		t.Fatalf("settle moved the clock %s or ran the schedule; want neither", moved)
	}
	if err := r.Advance(t.Context(), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	var at []string
	for _, rec := range r.log.find(func(rec record) bool { return rec.msg == "tick" }) {
		at = append(at, rec.attrs["at"]+" "+rec.attrs["n"])
	}
	want := "2030-01-01T00:01:00.000Z 1,2030-01-01T00:02:00.000Z 1,2030-01-01T00:03:00.000Z 1"
	if strings.Join(at, ",") != want {
		t.Fatalf("ticks %v, want one a minute with the cache complete", at)
	}
	s, _ := r.Status().Script("script.js")
	if h := s.Handlers["schedule"]; h.Calls != 3 || h.Errors != 0 {
		t.Fatalf("schedule counters %+v, want 3 calls without error", h)
	}
}

// A plugin loaded again replaces the running version, as a reload does, and the state API
// says so.
func TestOfflineLoadAgainReloads(t *testing.T) {
	t.Parallel()
	r := startOffline(t, requeueScript, configMap("default", "a"))
	if err := r.Load(t.Context(), "script.js", []byte(strings.Replace(requeueScript, "10m", "5m", 1))); err != nil {
		t.Fatal(err)
	}
	s, ok := r.Status().Script("script.js")
	if !ok || s.State != status.ScriptServing || len(s.Loads) != 2 || s.Loads[1].Result != status.LoadReloaded {
		t.Fatalf("status after a second Load: %+v", s)
	}
	if err := r.Load(t.Context(), "script.js", []byte("export default { onAdd( };")); err == nil || !strings.Contains(err.Error(), "script.js:1:") {
		t.Fatalf("broken content: %v, want an error at script.js:1:col", err)
	}
}
