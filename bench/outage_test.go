package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Outage recovery: how long after kube-apiserver answers again a script sees the changes made
// while it was down. The runner runs in-process on a control plane of its own, with a second
// kube-apiserver on the same etcd taking the writes during each outage (a marker ConfigMap
// last); the figure is from the restarted apiserver's first 200 on /readyz (polled every 10 ms)
// until the script's onAdd of that marker. A negative figure means the informer had already
// caught up before /readyz said so.

const outageDown = 10 * time.Second

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// markerTap signals each "marker" the script logs. A script's log fields come in the group
// "attrs" (scripting's console).
type markerTap struct{ seen chan string }

func (h markerTap) Enabled(context.Context, slog.Level) bool { return true }
func (h markerTap) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "marker" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key != "attrs" || a.Value.Kind() != slog.KindGroup {
				return true
			}
			for _, f := range a.Value.Group() {
				if f.Key == "name" {
					h.seen <- f.Value.String()
				}
			}
			return true
		})
	}
	return nil
}
func (h markerTap) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h markerTap) WithGroup(string) slog.Handler      { return h }

type outageBench struct {
	cp    *controlplane.ControlPlane
	extra dynamic.Interface
	tap   markerTap
	ns    string
}

func BenchmarkOutageRecovery(b *testing.B) {
	for range b.N {
		o := startOutageBench(b)
		single := o.outage(b, "single", false)
		var triple []time.Duration
		for i := range 3 {
			triple = append(triple, o.outage(b, fmt.Sprintf("triple-%d", i), false))
			time.Sleep(5 * time.Second) // up between outages, as a flapping apiserver would be
		}
		relist := o.outage(b, "compacted", true)
		b.ReportMetric(ms(single), "single-ms")
		b.ReportMetric(ms(max(triple[0], triple[1], triple[2])), "triple-worst-ms")
		b.ReportMetric(ms(relist), "compacted-ms")
		b.Logf("single %v; three in a row %v; after compaction %v", single, triple, relist)
	}
}

func startOutageBench(b *testing.B) *outageBench {
	b.Helper()
	cp, err := controlplane.Start(context.Background(), controlplane.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cp.Stop() })
	x, err := cp.StartExtraAPIServer(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	o := &outageBench{cp: cp, extra: dynamic.NewForConfigOrDie(x.Config), tap: markerTap{seen: make(chan string, 100)}, ns: "outage-bench"}
	o.create(b, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": o.ns}}, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	for i := range 100 {
		o.create(b, cm(o.ns, fmt.Sprintf("cm-%d", i)), configmaps)
	}
	dir := b.TempDir()
	script := `export default { watch: { resource: "v1/configmaps", namespace: "` + o.ns + `" },
  onAdd(cm) { if (cm.metadata.name.startsWith("marker-")) log.info("marker", { name: cm.metadata.name }); } };`
	if err := os.WriteFile(filepath.Join(dir, "outage.js"), []byte(script), 0o644); err != nil {
		b.Fatal(err)
	}
	ready := make(chan struct{})
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, Logger: slog.New(o.tap), OnReady: func() { close(ready) }})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("engine: %v", err)
		}
	})
	b.Cleanup(func() { _ = x.Stop() })
	<-ready
	return o
}

func cm(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"k": "v"}}
}

func (o *outageBench) create(b *testing.B, obj map[string]any, gvr schema.GroupVersionResource) {
	b.Helper()
	u := &unstructured.Unstructured{Object: obj}
	if _, err := o.extra.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

// outage kills kube-apiserver for outageDown with writes through the other one, restarts it
// and returns the time from its first ready answer to the script seeing the marker.
func (o *outageBench) outage(b *testing.B, name string, compact bool) time.Duration {
	b.Helper()
	if err := o.cp.KillAPIServer(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cms := o.extra.Resource(configmaps).Namespace(o.ns)
	for i := range 20 { // some churn, then the marker
		if _, err := cms.Patch(ctx, fmt.Sprintf("cm-%d", i), "application/merge-patch+json", fmt.Appendf(nil, `{"data":{"k":%q}}`, name), metav1.PatchOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	o.create(b, cm(o.ns, "marker-"+name), configmaps)
	if compact {
		if _, err := o.cp.CompactEtcd(ctx); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(outageDown) // the outage itself: nothing to wait for
	back := make(chan time.Time, 1)
	go func() { back <- o.firstReady() }()
	if err := o.cp.RestartAPIServer(ctx); err != nil {
		b.Fatal(err)
	}
	for {
		select {
		case got := <-o.tap.seen:
			if got != "marker-"+name {
				continue
			}
			seen := time.Now()
			return seen.Sub(<-back)
		case <-time.After(3 * time.Minute):
			b.Fatalf("%s: the script never saw the marker", name)
		}
	}
}

// firstReady polls kube-apiserver's /readyz every 10 ms and returns when it first answers 200.
func (o *outageBench) firstReady() time.Time {
	client := kubernetes.NewForConfigOrDie(o.cp.Config).Discovery().RESTClient()
	for {
		var code int
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		client.Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		cancel()
		if code == http.StatusOK {
			return time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
}
