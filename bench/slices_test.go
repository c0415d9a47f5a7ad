package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	kdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Alternating slices: the way BenchmarkTraceLatency and BenchmarkScriptMetricsLatency compare
// write→handler p99s that differ by a millisecond or two on a shared, loaded machine. Every
// contender lives in the same process at once, against the same control plane; what tells
// them apart is a runtime toggle (which runner's namespace the writer writes to, a tail
// client attached or not, a scraper running or not). The writer writes for a short slice to
// one contender, the slice's writes are waited for, and the next contender gets the next
// slice; each round gives every contender one slice, in an order rotated round by round, so
// every contender sees the machine's load swings alike. Samples are pooled per contender
// across rounds; the confidence intervals resample whole rounds (slicestats_test.go).
//
// Every write is also timed at two other points: when the writer's PATCH returned, and when a
// bare client-go informer in the same process (watching every namespace's ConfigMaps) handed it
// to its Go handler. The latter is when the watch event reached this process, give or take
// client-go's own decode: a tail that shows there already is the API server's and the
// machine's, and the runner's own share of a write is its handler time minus client-go's.

// sliceContender is one contender of an alternating run.
type sliceContender struct {
	name string
	ns   string // where the writer writes during its slices
	// attach, if set, starts what the contender adds before its slice and returns what stops
	// it (and waits for it) after the slice's writes have been handled.
	attach func() (detach func())
}

// sliceConfig is the run's shape: $JSINFORMER_LATENCY_ROUNDS and $JSINFORMER_SLICE_SECONDS
// override rounds and slice.
type sliceConfig struct {
	rounds int           // measured rounds, after one warm-up round
	slice  time.Duration // each contender's writing time per round
}

func sliceConfigFromEnv(b *testing.B, rounds int, slice time.Duration) sliceConfig {
	if s := os.Getenv("JSINFORMER_LATENCY_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			b.Fatalf("JSINFORMER_LATENCY_ROUNDS=%q: want an integer ≥ 2", s)
		}
		rounds = n
	}
	if s := os.Getenv("JSINFORMER_SLICE_SECONDS"); s != "" {
		d, err := time.ParseDuration(s + "s")
		if err != nil || d <= 0 {
			b.Fatalf("JSINFORMER_SLICE_SECONDS=%q: want a positive number", s)
		}
		slice = d
	}
	return sliceConfig{rounds: rounds, slice: slice}
}

// writeKey names one write: the ConfigMap's name and the stamp it carries.
type writeKey struct{ name, stamp string }

// probe collects the times of every write, from the writer, the client-go informer and the
// runner's handler (the script logs "lat" with the name and stamp; latencyTap-style loggers
// call handled). Safe for concurrent use.
type probe struct {
	mu       sync.Mutex
	sent     map[writeKey]int64 // stamp (send time, UnixNano)
	returned map[writeKey]int64 // PATCH response received
	arrived  map[writeKey]int64 // client-go handler
	handled  map[writeKey]int64 // runner handler
	nHandled int
}

func newProbe() *probe {
	return &probe{sent: map[writeKey]int64{}, returned: map[writeKey]int64{}, arrived: map[writeKey]int64{}, handled: map[writeKey]int64{}}
}

func (p *probe) handledBy(name, stamp string) {
	now := time.Now().UnixNano()
	p.mu.Lock()
	if _, dup := p.handled[writeKey{name, stamp}]; !dup {
		p.handled[writeKey{name, stamp}] = now
		p.nHandled++
	}
	p.mu.Unlock()
}

func (p *probe) arrivedAt(name, stamp string) {
	now := time.Now().UnixNano()
	p.mu.Lock()
	p.arrived[writeKey{name, stamp}] = now
	p.mu.Unlock()
}

// startArrivals runs the client-go informer that times each write's arrival in the process,
// until ctx ends.
func startArrivals(b *testing.B, ctx context.Context, wg *sync.WaitGroup, cp *controlplane.ControlPlane, p *probe) {
	inf := kdynamicinformer.NewFilteredDynamicInformer(dynamic.NewForConfigOrDie(cp.Config), configMapsGVR, metav1.NamespaceAll, 0,
		cache.Indexers{}, nil).Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		u := obj.(*unstructured.Unstructured)
		if t := u.GetAnnotations()["bench/t"]; t != "" {
			p.arrivedAt(u.GetName(), t)
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	wg.Go(func() { inf.RunWithContext(ctx) })
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("the arrivals informer did not sync")
	}
}

// sliceRecord is what one slice did.
type sliceRecord struct {
	contender  int
	round      int // -1 for the warm-up
	start, end int64
	sent       int
	failed     int
	drained    bool // every write was handled before the next slice
	proc       procWindow
}

// writeSlice patches ns's ConfigMaps round-robin at latencyRate for d, stamping each patch
// with its send time, and returns how many it sent and how many failed.
func writeSlice(ctx context.Context, client dynamic.Interface, p *probe, ns string, d time.Duration) (sent, failed int) {
	cms := client.Resource(configMapsGVR).Namespace(ns)
	jobs := make(chan int, latencyRate)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 { // enough senders that a slow request does not slow the rate
		wg.Go(func() {
			for i := range jobs {
				name := fmt.Sprintf("cm-%d", i%latencyCMs)
				t := time.Now().UnixNano()
				stamp := strconv.FormatInt(t, 10)
				patch := `{"metadata":{"annotations":{"bench/t":"` + stamp + `"}}}`
				_, err := cms.Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
				back := time.Now().UnixNano()
				mu.Lock()
				if err != nil {
					failed++
				} else {
					sent++
				}
				mu.Unlock()
				if err == nil {
					p.mu.Lock()
					p.sent[writeKey{name, stamp}] = t
					p.returned[writeKey{name, stamp}] = back
					p.mu.Unlock()
				}
			}
		})
	}
	tick := time.NewTicker(time.Second / latencyRate)
	end := time.NewTimer(d)
	for i := 0; ; i++ {
		select {
		case <-tick.C:
			jobs <- i
			continue
		case <-end.C:
		}
		break
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	return sent, failed
}

// waitHandled waits until the runner has handled want writes in all, up to a deadline.
func (p *probe) waitHandled(want int, deadline time.Duration) bool {
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		p.mu.Lock()
		n := p.nHandled
		p.mu.Unlock()
		if n >= want {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// runSlices runs a warm-up round and cfg.rounds measured rounds of cs, each round's order
// rotated by one from the last. The runner must be ready and handling cs's namespaces.
func runSlices(b *testing.B, cp *controlplane.ControlPlane, p *probe, cs []sliceContender, cfg sliceConfig) []sliceRecord {
	client := dynamic.NewForConfigOrDie(cp.Config)
	var out []sliceRecord
	total := 0
	for round := -1; round < cfg.rounds; round++ {
		for k := range cs {
			i := (k + round + 1) % len(cs)
			c := cs[i]
			d := cfg.slice
			if round < 0 {
				d = min(d, 3*time.Second)
			}
			var detach func()
			if c.attach != nil {
				detach = c.attach()
			}
			before := readProc()
			rec := sliceRecord{contender: i, round: round, start: time.Now().UnixNano()}
			rec.sent, rec.failed = writeSlice(context.Background(), client, p, c.ns, d)
			rec.end = time.Now().UnixNano()
			total += rec.sent
			rec.drained = p.waitHandled(total, 10*time.Second)
			rec.proc = readProc().since(before)
			if detach != nil {
				detach()
			}
			if !rec.drained {
				b.Logf("round %d %s: not every write was handled within 10 s of the slice's end", round, c.name)
			}
			out = append(out, rec)
		}
	}
	return out
}

// loadTap is the log handler of a runner under an alternating run: the script logs "lat" with
// the ConfigMap's name and stamp (latencyScript), and the engine "ready".
type loadTap struct {
	p     *probe
	ready chan struct{}
	once  *sync.Once
}

func newLoadTap(p *probe) loadTap {
	return loadTap{p: p, ready: make(chan struct{}), once: &sync.Once{}}
}

func (h loadTap) Enabled(context.Context, slog.Level) bool { return true }
func (h loadTap) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "ready":
		h.once.Do(func() { close(h.ready) })
	case "lat":
		name, t := stampOf(r)
		if t != "" {
			h.p.handledBy(name, t)
		}
	}
	return nil
}
func (h loadTap) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h loadTap) WithGroup(string) slog.Handler      { return h }

// latencyScript is the handler every alternating run times: it logs the stamp of each update.
func latencyScript(ns string) string {
	return `export default { watch: { resource: "v1/configmaps", namespace: "` + ns + `" },
  onUpdate(o, n) { const a = n.metadata.annotations || {}; log.info("lat", { name: n.metadata.name, t: a["bench/t"] || "" }); } };`
}

// sliceNamespace is a fresh namespace seeded with the latency ConfigMaps.
func sliceNamespace(b *testing.B, cp *controlplane.ControlPlane, prefix string) string {
	ns := fmt.Sprintf("%s-%d", strings.ToLower(prefix), time.Now().UnixNano())
	seedLatency(b, cp, ns)
	return ns
}
