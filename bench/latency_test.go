package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	kdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Event latency: a writer patches ConfigMaps at latencyRate writes a second, each patch
// stamping the annotation bench/t with its send time; each contender records, for every update
// it is handed, the time from that stamp to its handler running: the runner's JS onUpdate
// (timed when it logs, in-process), a bare client-go dynamic informer's Go handler
// (in-process), and the @kubernetes/client-node informer (node/latency.mjs). One contender at a
// time, on the shared control plane. $JSINFORMER_LATENCY_SECONDS sets the duration (default 60).

const (
	latencyRate = 500 // writes per second
	latencyCMs  = 100 // ConfigMaps written round-robin
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func BenchmarkEventLatency(b *testing.B) {
	installNodePeer(b)
	cp := controlplane.Require(b, env)
	d := 60 * time.Second
	if s := os.Getenv("JSINFORMER_LATENCY_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("JSINFORMER_LATENCY_SECONDS: %v", err)
		}
		d = time.Duration(n) * time.Second
	}
	for range b.N {
		for _, c := range []struct {
			name string
			run  func(*testing.B, *controlplane.ControlPlane, string, time.Duration) []float64
		}{{"runner", runnerLatency}, {"clientgo", clientGoLatency}, {"node", nodeLatency}} {
			ns := fmt.Sprintf("latency-%s-%d", c.name, time.Now().UnixNano())
			seedLatency(b, cp, ns)
			lat := c.run(b, cp, ns, d)
			if len(lat) < latencyRate*int(d/time.Second)/2 {
				b.Fatalf("%s: only %d updates timed", c.name, len(lat))
			}
			b.ReportMetric(percentile(lat, 50), c.name+"-p50-ms")
			b.ReportMetric(percentile(lat, 99), c.name+"-p99-ms")
			b.Logf("%s: %d updates, p50 %.2f ms, p99 %.2f ms", c.name, len(lat), percentile(lat, 50), percentile(lat, 99))
		}
	}
}

func seedLatency(b *testing.B, cp *controlplane.ControlPlane, ns string) {
	b.Helper()
	client := dynamic.NewForConfigOrDie(cp.Config)
	ctx := context.Background()
	mk := func(gvr schema.GroupVersionResource, obj map[string]any) {
		u := &unstructured.Unstructured{Object: obj}
		if _, err := client.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	mk(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	for i := range latencyCMs {
		mk(configMapsGVR, cm(ns, fmt.Sprintf("cm-%d", i)))
	}
	mk(configMapsGVR, cm(ns, "done"))
}

// writeAtRate patches the ConfigMaps round-robin at latencyRate for d, then marks "done". It
// may run on any goroutine: it reports failures in its error.
func writeAtRate(cp *controlplane.ControlPlane, ns string, d time.Duration) error {
	return writeN(cp, ns, latencyRate, int(latencyRate*d/time.Second))
}

// writeN patches the ConfigMaps round-robin, n patches at rate a second, stamping each with
// its send time (bench/t), then marks "done". It may run on any goroutine: it reports
// failures in its error.
func writeN(cp *controlplane.ControlPlane, ns string, rate, n int) error {
	var failed sync.Once
	var firstErr error
	cms := dynamic.NewForConfigOrDie(cp.Config).Resource(configMapsGVR).Namespace(ns)
	jobs := make(chan int, rate)
	var wg sync.WaitGroup
	for range 16 { // enough senders that a slow request does not slow the rate
		wg.Go(func() {
			for i := range jobs {
				patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"bench/t":"%d"}}}`, time.Now().UnixNano())
				if _, err := cms.Patch(context.Background(), fmt.Sprintf("cm-%d", i%latencyCMs), "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
					failed.Do(func() { firstErr = err })
				}
			}
		})
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range n {
		<-tick.C
		jobs <- i
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("write: %w", firstErr)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"bench/done":"%d"}}}`, time.Now().UnixNano())
	_, err := cms.Patch(context.Background(), "done", "application/merge-patch+json", patch, metav1.PatchOptions{})
	return err
}

// latencies collects measurements from handler goroutines.
type latencies struct {
	mu   sync.Mutex
	ms   []float64
	done chan struct{}
	once sync.Once
}

func newLatencies() *latencies { return &latencies{done: make(chan struct{})} }

func (l *latencies) stamp(name, t string) {
	if name == "done" {
		l.once.Do(func() { close(l.done) })
		return
	}
	ns, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.ms = append(l.ms, float64(time.Now().UnixNano()-ns)/1e6)
	l.mu.Unlock()
}

func (l *latencies) wait(b *testing.B) []float64 {
	select {
	case <-l.done:
	case <-time.After(2 * time.Minute):
		b.Fatal("the contender never saw the done marker")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ms
}

// latencyTap is the runner's log handler: the script logs "lat" from onUpdate.
type latencyTap struct {
	lat   *latencies
	ready chan struct{}
	once  *sync.Once
}

func (h latencyTap) Enabled(context.Context, slog.Level) bool { return true }
func (h latencyTap) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "ready":
		h.once.Do(func() { close(h.ready) })
	case "lat":
		name, t := stampOf(r)
		h.lat.stamp(name, t)
	}
	return nil
}

// stampOf reads the latency script's "lat" line: the object's name and the write's stamp.
func stampOf(r slog.Record) (name, t string) {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "attrs" {
			for _, g := range a.Value.Group() {
				switch g.Key {
				case "name":
					name = g.Value.String()
				case "t":
					t = g.Value.String()
				}
			}
		}
		return true
	})
	return name, t
}

func (h latencyTap) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h latencyTap) WithGroup(string) slog.Handler      { return h }

func runnerLatency(b *testing.B, cp *controlplane.ControlPlane, ns string, d time.Duration) []float64 {
	dir := b.TempDir()
	script := latencyScript(ns)
	if err := os.WriteFile(filepath.Join(dir, "lat.js"), []byte(script), 0o644); err != nil {
		b.Fatal(err)
	}
	tap := latencyTap{lat: newLatencies(), ready: make(chan struct{}), once: &sync.Once{}}
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, Logger: slog.New(tap), PaceGC: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("runner: %v", err)
		}
	}()
	<-tap.ready
	if err := writeAtRate(cp, ns, d); err != nil {
		b.Fatal(err)
	}
	return tap.lat.wait(b)
}

func clientGoLatency(b *testing.B, cp *controlplane.ControlPlane, ns string, d time.Duration) []float64 {
	inf := kdynamicinformer.NewFilteredDynamicInformer(dynamic.NewForConfigOrDie(cp.Config), configMapsGVR, ns, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	lat := newLatencies()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		u := obj.(*unstructured.Unstructured)
		lat.stamp(u.GetName(), u.GetAnnotations()["bench/t"])
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("client-go informer did not sync")
	}
	if err := writeAtRate(cp, ns, d); err != nil {
		b.Fatal(err)
	}
	return lat.wait(b)
}

func nodeLatency(b *testing.B, cp *controlplane.ControlPlane, ns string, d time.Duration) []float64 {
	cmd := exec.Command("node", filepath.Join(nodeDir, "latency.mjs"), cp.Kubeconfig, ns)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 1<<20), 64<<20)
	if !lines.Scan() || lines.Text() != "ready" {
		b.Fatalf("node latency peer did not start: %q", lines.Text())
	}
	written := make(chan error, 1)
	go func() { written <- writeAtRate(cp, ns, d) }()
	if !lines.Scan() {
		b.Fatal("node latency peer printed no result")
	}
	if err := <-written; err != nil {
		b.Fatal(err)
	}
	var res struct {
		LatenciesMs []float64 `json:"latenciesMs"`
	}
	if err := json.Unmarshal(lines.Bytes(), &res); err != nil {
		b.Fatal(err)
	}
	return res.LatenciesMs
}
