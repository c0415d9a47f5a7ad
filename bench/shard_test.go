package bench

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
)

// BenchmarkShardedReconcile: a CPU-bound reconcile (a JS loop of fixed cost) over 3,000
// ConfigMaps, run by 1, 2 and 3 sharded engines in this process, one after the other.
// A pass is started by saving a new content of the script: every replica reloads and its new
// version enqueues the keys it owns. Reported per replica count: keys/s of the pass (from the
// save until the last key was reconciled), and with 2 and 3 replicas the hand-over when one
// stops (cancelled, as on SIGTERM): until the others apply the smaller ring, and until every
// key it owned was reconciled again by its new owner. A fourth contender, one replica whose
// script sets concurrency: 3, shows what running reconciles in parallel alone gives on the
// same machine.
func BenchmarkShardedReconcile(b *testing.B) {
	cp := controlplane.Require(b, env)
	seedConfigMaps(b, cp, shardNamespace, shardKeys)
	var pass [4][]float64
	var ring, moved [4][]float64
	var parallel []float64 // one replica, concurrency 3: what parallelism alone gives here
	for round := 0; round < b.N; round++ {
		for n := 1; n <= 3; n++ {
			keysPerSec, ringMs, movedMs := shardRound(b, cp, n, 1, round)
			pass[n] = append(pass[n], keysPerSec)
			if n > 1 {
				ring[n], moved[n] = append(ring[n], ringMs), append(moved[n], movedMs)
			}
		}
		keysPerSec, _, _ := shardRound(b, cp, 1, 3, round)
		parallel = append(parallel, keysPerSec)
	}
	b.ReportMetric(median(parallel), "keys/s-1replica-concurrency3")
	b.ReportMetric(median(parallel)/median(pass[1]), "speedup-1replica-concurrency3")
	for n := 1; n <= 3; n++ {
		b.ReportMetric(median(pass[n]), fmt.Sprintf("keys/s-%dreplicas", n))
		if n > 1 {
			b.ReportMetric(median(pass[n])/median(pass[1]), fmt.Sprintf("speedup-%dreplicas", n))
			b.ReportMetric(median(ring[n]), fmt.Sprintf("handover-ms-%dto%d", n, n-1))
			b.ReportMetric(median(moved[n]), fmt.Sprintf("moved-reconciled-ms-%dto%d", n, n-1))
		}
	}
}

// The ring's durations: a short retry period, so that hand-overs are quick, and a renew
// deadline longer than the tests' 2 s, which three engines reloading 3,000 objects in one
// process on a loaded 2-core machine can miss (the replica then exits, as it must).
const (
	shardLease = 9 * time.Second
	shardRenew = 6 * time.Second
	shardRetry = 500 * time.Millisecond
)

const (
	shardNamespace = "bench-shard"
	shardKeys      = 3000
	// shardLoop is the reconcile's fixed work: about 1 ms of JS on an idle core of these machines.
	shardLoop = 20_000
)

func shardScript(pass string, concurrency int) string {
	return `export default {
  watch: { resource: "v1/configmaps", namespace: "` + shardNamespace + `" },
  concurrency: ` + fmt.Sprint(concurrency) + `,
  reconcile(key, ctx) {
    let x = 0;
    for (let i = 0; i < ` + fmt.Sprint(shardLoop) + `; i++) x = (x * 31 + i) | 0;
    log.info("reconciled", { key, pass: "` + pass + `", x });
  },
};`
}

// reconciles records, per replica, when each key was last reconciled in each pass.
type reconciles struct {
	mu       sync.Mutex
	problems []string                        // the replicas' WARN and ERROR lines, for a failure's message
	seen     map[string]map[string]time.Time // pass → key → when
	by       map[string]string               // pass/key → replica
}

func newReconciles() *reconciles {
	return &reconciles{seen: map[string]map[string]time.Time{}, by: map[string]string{}}
}

func (r *reconciles) record(replica, pass, key string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[pass] == nil {
		r.seen[pass] = map[string]time.Time{}
	}
	r.seen[pass][key] = at
	r.by[pass+"/"+key] = replica
}

// waitPass waits until every key was reconciled in pass by a replica accepted by who (since
// after), and returns when the last one was.
func (r *reconciles) waitPass(b *testing.B, replicas []*shardReplica, pass string, keys []string, after time.Time, who func(string) bool) time.Time {
	b.Helper()
	deadline := time.Now().Add(readyTimeout)
	for {
		r.mu.Lock()
		last, missing := time.Time{}, 0
		for _, k := range keys {
			at, ok := r.seen[pass][k]
			if !ok || at.Before(after) || !who(r.by[pass+"/"+k]) {
				missing++
			} else if at.After(last) {
				last = at
			}
		}
		r.mu.Unlock()
		if missing == 0 {
			return last
		}
		for _, rep := range replicas {
			select {
			case err := <-rep.done:
				b.Fatalf("%s stopped during pass %s: %v; warnings: %v", rep.id, pass, err, r.problems)
			default:
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("pass %s: %d of %d keys not reconciled within %s; warnings: %v", pass, missing, len(keys), readyTimeout, r.problems)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reconcileTap is one engine's log handler: it records the script's "reconciled" lines.
type reconcileTap struct {
	replica string
	r       *reconciles
}

func (h reconcileTap) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h reconcileTap) Handle(_ context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelWarn {
		h.r.mu.Lock()
		if len(h.r.problems) < 50 {
			h.r.problems = append(h.r.problems, h.replica+": "+rec.Level.String()+" "+rec.Message)
		}
		h.r.mu.Unlock()
	}
	if rec.Message != "reconciled" {
		return nil
	}
	var key, pass string
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "attrs" {
			for _, g := range a.Value.Group() {
				switch g.Key {
				case "key":
					key = g.Value.String()
				case "pass":
					pass = g.Value.String()
				}
			}
		}
		return true
	})
	h.r.record(h.replica, pass, key, time.Now())
	return nil
}
func (h reconcileTap) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h reconcileTap) WithGroup(string) slog.Handler      { return h }

type shardReplica struct {
	id     string
	e      *engine.Engine
	cancel context.CancelFunc
	done   chan error
}

// shardRound runs one pass with n replicas and, for n > 1, stops one of them.
func shardRound(b *testing.B, cp *controlplane.ControlPlane, n, concurrency, round int) (keysPerSec, ringMs, movedMs float64) {
	b.Helper()
	dir := b.TempDir()
	first, second := fmt.Sprintf("r%d-n%d-c%d-a", round, n, concurrency), fmt.Sprintf("r%d-n%d-c%d-b", round, n, concurrency)
	writeScript(b, dir, "shard.js", shardScript(first, concurrency))
	rec := newReconciles()
	keys := make([]string, shardKeys)
	for i := range keys {
		keys[i] = shardNamespace + "/" + configMapName(i)
	}
	ringName := fmt.Sprintf("bench-r%d-n%d-c%d", round, n, concurrency)
	var replicas []*shardReplica
	var ids []string
	for i := range n {
		id := fmt.Sprintf("replica-%d", i)
		ids = append(ids, id)
		replicas = append(replicas, startShardReplica(b, cp, dir, ringName, id, rec))
	}
	defer func() {
		for _, r := range replicas {
			r.stop(b)
		}
	}()
	waitRing(b, replicas, n)
	anyone := func(string) bool { return true }
	rec.waitPass(b, replicas, first, keys, time.Time{}, anyone) // the pass of the start-up, as the replicas joined

	start := time.Now()
	writeScript(b, dir, "shard.js", shardScript(second, concurrency))
	last := rec.waitPass(b, replicas, second, keys, start, anyone)
	keysPerSec = float64(shardKeys) / last.Sub(start).Seconds()
	if n == 1 {
		return keysPerSec, 0, 0
	}

	// Hand-over: the last replica stops; its keys go to the others.
	full := sharding.NewRing(ids...)
	leaving := replicas[n-1]
	var lost []string
	for _, k := range keys {
		if full.Owner(k) == leaving.id {
			lost = append(lost, k)
		}
	}
	stopped := time.Now()
	leaving.stop(b)
	replicas = replicas[:n-1]
	waitRing(b, replicas, n-1)
	ringMs = ms(time.Since(stopped))
	last = rec.waitPass(b, replicas, second, lost, stopped, func(r string) bool { return r != leaving.id })
	return keysPerSec, ringMs, ms(last.Sub(stopped))
}

func startShardReplica(b *testing.B, cp *controlplane.ControlPlane, dir, ring, id string, rec *reconciles) *shardReplica {
	b.Helper()
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: dir, PaceGC: true, HandlerTimeout: 30 * time.Second,
		Logger: slog.New(reconcileTap{replica: id, r: rec}),
		Sharding: &engine.LeaderElection{Namespace: shardNamespace, Name: ring, Identity: id,
			LeaseDuration: shardLease, RenewDeadline: shardRenew, RetryPeriod: shardRetry}})
	if err != nil {
		b.Fatalf("new engine: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &shardReplica{id: id, e: e, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- e.Run(ctx) }()
	return r
}

// stop cancels the replica, as SIGTERM does, and waits for Run; idempotent.
func (r *shardReplica) stop(b *testing.B) {
	b.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			b.Fatalf("%s: Run: %v", r.id, err)
		}
	case <-time.After(time.Minute):
		b.Fatalf("%s did not stop within a minute", r.id)
	}
}

// waitRing waits until every replica acts on a settled ring of n members.
func waitRing(b *testing.B, replicas []*shardReplica, n int) {
	b.Helper()
	deadline := time.Now().Add(readyTimeout)
	for {
		settled := true
		for _, r := range replicas {
			st := r.e.Status().Shard
			if st == nil || len(st.Members) != n || st.Pending {
				settled = false
			}
		}
		if settled {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the ring of %d replicas did not settle within %s", n, readyTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func configMapName(i int) string { return fmt.Sprintf("key-%05d", i) }

// seedConfigMaps creates namespace and count ConfigMaps in it, unless they exist.
func seedConfigMaps(b *testing.B, cp *controlplane.ControlPlane, namespace string, count int) {
	b.Helper()
	client := dynamic.NewForConfigOrDie(cp.Config)
	ctx := context.Background()
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}}
	if _, err := client.Resource(namespacesGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatalf("create namespace: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, seedWorkers)
	for w := range seedWorkers {
		wg.Go(func() {
			for i := w; i < count; i += seedWorkers {
				obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": configMapName(i), "namespace": namespace}, "data": map[string]any{"k": strings.Repeat("x", 16)}}}
				if _, err := client.Resource(configMapsGVR).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("seed configmaps: %v", err)
	}
}
