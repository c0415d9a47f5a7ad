package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	kdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// syncRounds is how many times each contender syncs, alternating, per benchmark iteration:
// 5, or $JSINFORMER_SYNC_ROUNDS (for an interval of a small ratio, e.g. recording on/off).
var syncRounds = func() int {
	if n, err := strconv.Atoi(os.Getenv("JSINFORMER_SYNC_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}()

// syncScript reads the same two fields as the Go handler of the client-go contenders.
const syncScript = `let n = 0;
let x = "";
export default {
  watch: { resource: "apps/v1/deployments", namespace: "bench" },
  onAdd(d) { n += d.spec.replicas; x = d.metadata.name; },
};
`

// contender measures one initial sync of the seeded Deployments.
type contender struct {
	name string
	sync func(*testing.B, *controlplane.ControlPlane) sample
}

// BenchmarkInitialSync compares the runner's start-up (engine.Run until OnReady, the JS onAdd
// having run for every object) with a bare client-go dynamic informer and Go handler, without
// and with a managedFields-stripping transform. Contenders alternate within each round.
func BenchmarkInitialSync(b *testing.B) {
	cp := seeded(b)
	contenders := []contender{
		{"runner", runnerSync},
		{"client-go", clientGoSync(nil)},
		{"client-go-stripped", clientGoSync(dynamicinformer.StripManagedFields)},
	}
	results := runRounds(b, cp, contenders)
	b.ReportMetric(listMB(b, cp), "list-MB")
	reportRatios(b, "", results[0], results[1])
	reportRatios(b, "-vs-stripped", results[0], results[2])
}

// runRounds runs every contender once per round, in turn, syncRounds rounds per benchmark
// iteration, logs one line per round and reports each contender's medians.
func runRounds(b *testing.B, cp *controlplane.ControlPlane, contenders []contender) []series {
	results := make([]series, len(contenders))
	for b.Loop() {
		for round := range syncRounds {
			line := fmt.Sprintf("round %d:", round+1)
			for i, c := range contenders {
				s := c.sync(b, cp)
				results[i].add(s)
				line += fmt.Sprintf(" | %s %.0f ms %.1f MB", c.name, ms(s.elapsed), mb(s.heap))
			}
			b.Log(line) // one line per round: benchmark logs are cut after ten lines
		}
	}
	// Reported after b.Loop, which resets metrics reported before it.
	for i, c := range contenders {
		b.ReportMetric(median(results[i].ms), c.name+"-ms")
		b.ReportMetric(median(results[i].mb), c.name+"-heap-MB")
	}
	return results
}

// reportRatios reports the ratios of the medians of a and b (a/b; lower is better for a).
func reportRatios(b *testing.B, suffix string, a, base series) {
	b.ReportMetric(median(a.ms)/median(base.ms), "time-ratio"+suffix)
	b.ReportMetric(median(a.mb)/median(base.mb), "heap-ratio"+suffix)
}

// runnerSync times engine.Run from its start until OnReady.
func runnerSync(b *testing.B, cp *controlplane.ControlPlane) sample {
	dir := b.TempDir()
	writeScript(b, dir, "sum.js", syncScript)
	base := liveHeap()
	r := newRunner(b, cp, dir)
	start := time.Now()
	r.start()
	r.waitReady(b)
	s := sample{elapsed: time.Since(start), heap: liveHeap() - base}
	r.stop(b)
	return s
}

// clientGoSync returns a contender running client-go's dynamic informer with a Go handler
// reading the same two fields as syncScript, and the given transform (nil: none).
func clientGoSync(transform cache.TransformFunc) func(*testing.B, *controlplane.ControlPlane) sample {
	return func(b *testing.B, cp *controlplane.ControlPlane) sample {
		base := liveHeap()
		inf := newClientGoInformer(b, cp, transform)
		h := &addCounter{want: seedCount, all: make(chan struct{})}
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			b.Fatalf("add event handler: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		start := time.Now()
		go func() { defer close(stopped); inf.RunWithContext(ctx) }()
		if err := waitClosed(readyTimeout, reg.HasSyncedChecker().Done(), h.all); err != nil {
			b.Fatal(err)
		}
		s := sample{elapsed: time.Since(start), heap: liveHeap() - base}
		cancel()
		<-stopped
		return s
	}
}

// newClientGoInformer builds the informer client-go's dynamic factory would, namespace index
// included, on a client of its own.
func newClientGoInformer(b *testing.B, cp *controlplane.ControlPlane, transform cache.TransformFunc) cache.SharedIndexInformer {
	b.Helper()
	return clientGoInformer(dynamic.NewForConfigOrDie(cp.Config), benchNamespace, transform)
}

// clientGoInformer is the informer client-go's dynamic factory would build on client, with
// the given transform (nil: none; setting it cannot fail on an informer not yet started).
func clientGoInformer(client dynamic.Interface, namespace string, transform cache.TransformFunc) cache.SharedIndexInformer {
	inf := kdynamicinformer.NewFilteredDynamicInformer(client, deploymentsGVR, namespace, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	if transform != nil {
		_ = inf.SetTransform(transform)
	}
	return inf
}

// addCounter is the Go twin of syncScript's onAdd. client-go calls it from one goroutine.
type addCounter struct {
	want, n  int
	replicas int64
	name     string
	all      chan struct{} // closed at the want-th add
}

func (h *addCounter) OnAdd(obj any, _ bool) {
	u := obj.(*unstructured.Unstructured)
	r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	h.replicas += r
	h.name = u.GetName()
	if h.n++; h.n == h.want {
		close(h.all)
	}
}

func (h *addCounter) OnUpdate(any, any) {}
func (h *addCounter) OnDelete(any)      {}

// listMB is the size of the JSON list of the seeded Deployments, as the apiserver sends it.
func listMB(b *testing.B, cp *controlplane.ControlPlane) float64 {
	return listMBOf(b, cp, benchNamespace)
}

// listMBOf is the size of the JSON list of the Deployments in namespace.
func listMBOf(b *testing.B, cp *controlplane.ControlPlane, namespace string) float64 {
	b.Helper()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	body, err := cs.AppsV1().RESTClient().Get().AbsPath("/apis/apps/v1/namespaces", namespace, "deployments").
		SetHeader("Accept", "application/json").DoRaw(b.Context())
	if err != nil {
		b.Fatalf("list deployments: %v", err)
	}
	return mb(int64(len(body)))
}
