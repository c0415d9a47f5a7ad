package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
	"github.com/jsinformer/jsinformer/shardrange"
)

// cacheLeaseNamespace holds the rings' Leases; each variant has a ring of its own.
const cacheLeaseNamespace = "bench-shardcache"

// cacheVariant is one configuration of BenchmarkShardCache.
type cacheVariant struct {
	name       string
	replicas   int
	gate       bool // kube-apiserver runs with ShardedListAndWatch=true
	shardCache bool // --shard-cache (else plain --sharded: every replica caches everything)
}

// cacheVariants are measured in this order; "on-1" is the baseline (one replica holding
// everything, gate on). $JSINFORMER_SHARDCACHE_VARIANTS (a comma list of names) selects;
// the default is all but off-1.
var cacheVariants = []cacheVariant{
	{"on-1", 1, true, true},
	{"on-4", 4, true, true},
	{"off-4", 4, false, true},
	{"on-2", 2, true, true},
	{"off-2", 2, false, true},
	{"plain-1", 1, true, false},
	// One replica owns every slice: its informer is not partitioned and sends no selector,
	// so the gate changes nothing; not run by default.
	{"off-1", 1, false, true},
}

// cacheReplicaResult is one replica's initial sync.
type cacheReplicaResult struct {
	id        string
	objects   int           // the objects its partition holds (from the ring's plan: the script waits for them)
	idle      int64         // RSS with the ring settled and no script yet
	aboveIdle int64         // peak RSS (VmHWM) during the sync minus idle
	cpu       time.Duration // CPU from the script's save until the marker
	wall      time.Duration // wall time from the script's save until the marker
	filtered  string        // jsinformer_informer_shard_server_filtered: "1" server, "0" client
	received  float64       // jsinformer_informer_shard_received_total: objects it received
	bytes     float64       // jsinformer_informer_received_bytes_total, all its informers: bytes read (decompressed)
}

// cacheResult is one variant's figures.
type cacheResult struct {
	v          cacheVariant
	replicas   []cacheReplicaResult
	serverCPU  time.Duration // kube-apiserver's CPU for the N syncs, its idle rate subtracted
	serverPeak int64         // its peak RSS during them minus its RSS before
	wall       time.Duration // from the saves until every replica printed the marker
	skew       float64       // the largest replica's objects over the fair share
	ringMs     float64       // after kill -9 of one: until the survivors act on the smaller ring
	coveredMs  float64       // after kill -9 of one: until the survivors cache every object
}

// BenchmarkShardCache measures partitioned caches (--sharded --shard-cache, docs/sharding.md)
// on 100,000 realistic Deployments over 200 namespaces ("uniform"), and with a 201st
// namespace holding a quarter of all objects ("skewed"), with 1, 2 and 4 runner processes,
// kube-apiserver's ShardedListAndWatch gate on (the server filters) and off (each replica
// decodes everything and drops what is not its own).
//
// Each variant restarts kube-apiserver (with or without the gate; etcd keeps the objects),
// waits until its watch cache serves the Deployments, starts the replicas with an empty
// scripts directory and waits until every one acts on the ring of all of them. Idle is then
// each replica's RSS (its ring joined, no script, no informer). Then the API server's idle CPU
// rate is taken, its and every replica's peak RSS are reset (clear_refs), and a script that
// counts its initial adds is saved into every replica's directory at once: each prints a
// marker at the count its partition holds (computed from the ring's plan, read from the
// Leases, as the runner places keys). Per replica: peak RSS above idle, CPU and wall from the
// save to its marker. The API server: CPU for the N syncs (idle rate subtracted) and peak RSS
// above its RSS before. With 2 or more replicas one is then killed (SIGKILL) and the time is
// taken until the survivors report the smaller ring and until each caches exactly its
// partition in that ring's plan (jsinformer_shard_cached_objects). $JSINFORMER_SHARDCACHE_ROUNDS rounds (1 by default), the
// variants' order rotated each round; figures are medians over rounds, and ratios are to
// "on-1", one replica holding everything with the gate on, measured in the same run.
func BenchmarkShardCache(b *testing.B) {
	bin := deployedCopy(b, buildRunner(b))
	variants := selectCacheVariants(b)
	for _, skewed := range []bool{false, true} {
		name := map[bool]string{false: "uniform", true: "skewed"}[skewed]
		b.Run(name, func(b *testing.B) {
			cp, set := seededCache(b, skewed)
			if err := createNamespace(b.Context(), dynamic.NewForConfigOrDie(cp.Config), cacheLeaseNamespace); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: %d deployments in %d namespaces; kube-apiserver %s; load average %s",
				set.name, set.total(), len(set.byNS), serverVersion(b, cp), loadAverage())
			results := map[string][]cacheResult{}
			for b.Loop() {
				for round := range envInt(b, "JSINFORMER_SHARDCACHE_ROUNDS", 1) {
					// The order rotates each round: following a given variant (the
					// machine's page cache, etcd's) is no variant's fixed lot.
					for k := range variants {
						v := variants[(round+k)%len(variants)]
						r := runCacheVariant(b, cp, bin, set, v)
						results[v.name] = append(results[v.name], r)
						logCacheResult(b, set, round, r)
					}
				}
			}
			b.Logf("%s done; load average %s", set.name, loadAverage())
			reportCacheResults(b, results)
		})
	}
}

// selectCacheVariants keeps the variants $JSINFORMER_SHARDCACHE_VARIANTS names, in that
// order; all by default.
func selectCacheVariants(b *testing.B) []cacheVariant {
	names := os.Getenv("JSINFORMER_SHARDCACHE_VARIANTS")
	if names == "" {
		return cacheVariants[:len(cacheVariants)-1]
	}
	var out []cacheVariant
	for name := range strings.SplitSeq(names, ",") {
		i := slices.IndexFunc(cacheVariants, func(v cacheVariant) bool { return v.name == name })
		if i < 0 {
			b.Fatalf("$JSINFORMER_SHARDCACHE_VARIANTS: unknown variant %q", name)
		}
		out = append(out, cacheVariants[i])
	}
	return out
}

// runCacheVariant measures one variant on a freshly restarted kube-apiserver.
func runCacheVariant(b *testing.B, cp *controlplane.ControlPlane, bin string, set cacheSet, v cacheVariant) cacheResult {
	b.Helper()
	gate := "--feature-gates=ShardedListAndWatch=" + fmt.Sprint(v.gate)
	if err := cp.RestartAPIServer(b.Context(), gate); err != nil {
		b.Fatalf("restart kube-apiserver with %s: %v", gate, err)
	}
	primeAllDeployments(b, cp)
	ids := make([]string, v.replicas)
	for i := range ids {
		ids[i] = fmt.Sprintf("replica-%d", i)
	}
	ring := fmt.Sprintf("%s-%s-%d", set.name, v.name, time.Now().UnixNano())
	var replicas []*cacheReplica
	defer func() {
		for _, r := range replicas {
			r.stop()
		}
	}()
	for _, id := range ids {
		scripts, metrics := newScriptsDir(b, id), freeAddr(b)
		args := cacheRunnerArgs(cp, ring, id, scripts, metrics)
		if v.shardCache {
			args = append(args, "--shard-cache")
		}
		replicas = append(replicas, startCacheReplica(b, bin, id, scripts, metrics, args))
	}
	waitCacheRing(b, replicas, len(replicas))

	var plan *shardrange.Plan // the plan the replicas act on: they joined the ring with it
	if v.shardCache {
		plan = cachePlan(b, cp, ring, ids)
	}
	want := partitionSizes(set, ids, plan)
	res := cacheResult{v: v, skew: skewOf(want)}
	pid := cp.APIServerPID()
	idleRate := settle(b, pid)
	idle := make([]int64, len(replicas))
	cpu0 := make([]time.Duration, len(replicas))
	for i, r := range replicas {
		idle[i] = procRSS(b, r.cmd.Process.Pid)
		resetPeak(b, r.cmd.Process.Pid)
		var err error
		if cpu0[i], err = cpuOf(r.cmd.Process.Pid); err != nil {
			b.Fatal(err)
		}
	}
	before := readServer(b, pid)
	resetPeak(b, pid)
	saved := time.Now()
	for i, r := range replicas {
		r.writeScript(b, want[ids[i]])
	}
	waitMarkers(b, replicas)
	after := readServer(b, pid)
	res.serverCPU = max(after.cpu-before.cpu-time.Duration(idleRate*float64(after.at.Sub(before.at))), 0)
	res.serverPeak = after.hwm - before.rss
	for i, r := range replicas {
		at, cpu := r.marker()
		res.wall = max(res.wall, at.Sub(saved))
		rr := cacheReplicaResult{id: r.id, objects: want[r.id], idle: idle[i],
			aboveIdle: peakOf(r.cmd.Process.Pid) - idle[i], cpu: cpu - cpu0[i], wall: at.Sub(saved)}
		rr.bytes = r.sum("jsinformer_informer_received_bytes_total{")
		if v.shardCache {
			// One partitioned informer per replica: the first series is its.
			if f, ok := r.first("jsinformer_informer_shard_server_filtered{"); ok {
				rr.filtered = fmt.Sprint(f)
			}
			rr.received, _ = r.first("jsinformer_informer_shard_received_total{")
		}
		res.replicas = append(res.replicas, rr)
	}
	if v.shardCache {
		waitCached(b, replicas, want, time.Now())
		checkFiltered(b, res)
	}
	if v.shardCache && v.replicas > 1 {
		res.ringMs, res.coveredMs = killOne(b, cp, set, ring, replicas, ids)
		replicas = replicas[:len(replicas)-1] // killed; stop() of an ended process is a no-op
	}
	return res
}

// checkFiltered fails the variant if a replica of two or more did not filter where the
// variant says (the server with the gate, the runner without): its figures would be another
// variant's. (One replica owns every slice: whether a full partition is sent as a selector is
// the runner's choice, and only logged.)
func checkFiltered(b *testing.B, res cacheResult) {
	b.Helper()
	if res.v.replicas < 2 {
		return
	}
	want := map[bool]string{true: "1", false: "0"}[res.v.gate]
	for _, r := range res.replicas {
		if r.filtered != want {
			b.Fatalf("%s: %s: jsinformer_informer_shard_server_filtered = %q, want %s", res.v.name, r.id, r.filtered, want)
		}
	}
}

// primeAllDeployments returns once the watch cache serves the Deployments of every namespace
// (primeWatchCache, cluster-wide).
func primeAllDeployments(b *testing.B, cp *controlplane.ControlPlane) {
	b.Helper()
	_, err := dynamic.NewForConfigOrDie(cp.Config).Resource(deploymentsGVR).
		List(b.Context(), metav1.ListOptions{ResourceVersion: "0", LabelSelector: "jsinformer-bench-none=x"})
	if err != nil {
		b.Fatalf("prime kube-apiserver's watch cache: %v", err)
	}
}

// partitionSizes is, per replica of ids, the objects its cache holds: with a plan (under
// --shard-cache) those of the namespaces whose slice the plan gives it (as the runner places
// them: shardrange.Plan.KeyOwner), else all of them.
func partitionSizes(set cacheSet, ids []string, plan *shardrange.Plan) map[string]int {
	out := map[string]int{}
	for _, id := range ids {
		out[id] = 0 // a replica owning nothing still has an entry
		if plan == nil {
			out[id] = set.total()
		}
	}
	if plan == nil {
		return out
	}
	for ns, n := range set.byNS {
		owner, _ := plan.KeyOwner(ns + "/x")
		out[owner] += n
	}
	return out
}

// cachePlan waits until the lowest of ids has written its plan for the ring of ids on its
// Lease (ring ring in cacheLeaseNamespace) and returns it. It reads that Lease rather than
// sharding.APILeases.Plan, whose ring counts a killed replica's Lease until the survivors
// delete it, two lease durations after it expired: long after they act on the new ring.
func cachePlan(b *testing.B, cp *controlplane.ControlPlane, ring string, ids []string) *shardrange.Plan {
	b.Helper()
	store := sharding.APILeases{Client: kubernetes.NewForConfigOrDie(cp.Config).CoordinationV1(), Namespace: cacheLeaseNamespace, Ring: ring}
	members := sharding.NewRing(ids...)
	deadline := time.Now().Add(time.Minute)
	for {
		plan, err := lowestPlan(b.Context(), store, members)
		if err == nil {
			return plan
		}
		if time.Now().After(deadline) {
			b.Fatalf("no plan of ring %v within a minute: %v", members, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lowestPlan is the plan members[0] wrote on its Lease for the ring of members, read without
// waiting for a killed member's Lease to be deleted.
func lowestPlan(ctx context.Context, store sharding.APILeases, members sharding.Ring) (*shardrange.Plan, error) {
	view, err := store.PlanFor(ctx, members)
	if err != nil {
		return nil, err
	}
	plan, err := shardrange.DecodePlan(view.Plan)
	if err == nil && !plan.Ring().Equal(members) {
		err = fmt.Errorf("read shard plan: the plan for %v names members %v", members, plan.Ring())
	}
	return plan, err
}

// skewOf is the largest partition over the fair share (total / replicas).
func skewOf(sizes map[string]int) float64 {
	total, largest := 0, 0
	for _, n := range sizes {
		total += n
		largest = max(largest, n)
	}
	if total == 0 {
		return 0
	}
	return float64(largest) / (float64(total) / float64(len(sizes)))
}

// waitCacheRing waits until every replica reports a ring of n members.
func waitCacheRing(b *testing.B, replicas []*cacheReplica, n int) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, r := range replicas {
		for {
			r.alive(b)
			if got, ok := r.gauge("jsinformer_shard_members"); ok && int(got) == n {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s does not report a ring of %d within 2 minutes\n%s", r.id, n, r.tail)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// waitMarkers waits until every replica printed the marker.
func waitMarkers(b *testing.B, replicas []*cacheReplica) {
	b.Helper()
	deadline := time.After(readyTimeout)
	for _, r := range replicas {
		select {
		case <-r.handled:
		case <-r.ended:
			b.Fatalf("%s exited before handling its objects: %v\n%s", r.id, r.cmd.ProcessState, r.tail)
		case <-deadline:
			b.Fatalf("%s did not handle its objects within %s\n%s", r.id, readyTimeout, r.tail)
		}
	}
}

// waitCached waits until each replica's jsinformer_shard_cached_objects is its size in want,
// and returns the time since from then.
func waitCached(b *testing.B, replicas []*cacheReplica, want map[string]int, from time.Time) time.Duration {
	b.Helper()
	deadline := time.Now().Add(readyTimeout)
	for _, r := range replicas {
		for {
			r.alive(b)
			got, ok := r.gauge(`jsinformer_shard_cached_objects{script="count.js"}`)
			if ok && int(got) == want[r.id] {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s caches %v objects (reported: %v), want %d, after %s\n%s", r.id, got, ok, want[r.id], readyTimeout, r.tail)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return time.Since(from)
}

// killOne kills the last replica with SIGKILL and returns the time until the survivors act
// on the ring without it and until they cache every object again, each its new partition.
func killOne(b *testing.B, cp *controlplane.ControlPlane, set cacheSet, ring string, replicas []*cacheReplica, ids []string) (ringMs, coveredMs float64) {
	b.Helper()
	survivors := replicas[:len(replicas)-1]
	killed := time.Now()
	replicas[len(replicas)-1].kill(b)
	waitCacheRing(b, survivors, len(survivors))
	ringMs = ms(time.Since(killed))
	// The survivors act on the smaller ring only with its plan: it is on the Leases now.
	want := partitionSizes(set, ids[:len(ids)-1], cachePlan(b, cp, ring, ids[:len(ids)-1]))
	return ringMs, ms(waitCached(b, survivors, want, killed))
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func logCacheResult(b *testing.B, set cacheSet, round int, r cacheResult) {
	line := fmt.Sprintf("%s round %d %s: wall %.0f ms, server cpu %.0f ms peak +%.0f MB, skew %.2f, ring after kill %.0f ms, covered %.0f ms; load %s",
		set.name, round+1, r.v.name, ms(r.wall), ms(r.serverCPU), mb(r.serverPeak), r.skew, r.ringMs, r.coveredMs, loadAverage())
	for _, x := range r.replicas {
		line += fmt.Sprintf("\n  %s: %d objects, idle %.1f MB, peak above idle %.1f MB, cpu %.0f ms, wall %.0f ms, received %.0f (%.1f MB), server-filtered %q",
			x.id, x.objects, mb(x.idle), mb(x.aboveIdle), ms(x.cpu), ms(x.wall), x.received, x.bytes/(1<<20), x.filtered)
	}
	b.Log(line)
}

// cacheFigures are one variant's reported figures, each the median over rounds.
type cacheFigures struct {
	maxPeak, maxCPU, sumCPU, serverCPU, serverPeak, skew, covered, receivedMB float64
}

func figuresOf(rs []cacheResult) cacheFigures {
	var maxPeak, maxCPU, sumCPU, serverCPU, serverPeak, skew, covered, received []float64
	for _, r := range rs {
		var peak, top, sum, bytes float64
		for _, x := range r.replicas {
			peak, top, sum = max(peak, mb(x.aboveIdle)), max(top, ms(x.cpu)), sum+ms(x.cpu)
			bytes += x.bytes
		}
		received = append(received, bytes/(1<<20))
		maxPeak, maxCPU, sumCPU = append(maxPeak, peak), append(maxCPU, top), append(sumCPU, sum)
		serverCPU, serverPeak = append(serverCPU, ms(r.serverCPU)), append(serverPeak, mb(r.serverPeak))
		skew, covered = append(skew, r.skew), append(covered, r.coveredMs)
	}
	return cacheFigures{median(maxPeak), median(maxCPU), median(sumCPU), median(serverCPU), median(serverPeak), median(skew), median(covered), median(received)}
}

// reportCacheResults reports per variant (medians over rounds) the largest replica's peak
// above idle and CPU, the replicas' CPU summed, the API server's CPU and peak, the skew and
// the time to full coverage after a kill; and the ratios of the goals against "on-1" when it
// ran.
func reportCacheResults(b *testing.B, results map[string][]cacheResult) {
	figures := map[string]cacheFigures{}
	for name, rs := range results {
		f := figuresOf(rs)
		figures[name] = f
		b.ReportMetric(f.maxPeak, name+"-max-peak-above-idle-MB")
		b.ReportMetric(f.maxCPU, name+"-max-replica-cpu-ms")
		b.ReportMetric(f.sumCPU, name+"-replicas-cpu-ms")
		b.ReportMetric(f.serverCPU, name+"-server-cpu-ms")
		b.ReportMetric(f.serverPeak, name+"-server-peak-MB")
		b.ReportMetric(f.skew, name+"-skew")
		b.ReportMetric(f.receivedMB, name+"-received-MB")
		if v := rs[0].v; v.shardCache && v.replicas > 1 {
			b.ReportMetric(f.covered, name+"-covered-after-kill-ms")
		}
	}
	base, ok := figures["on-1"]
	if !ok {
		return
	}
	for name, f := range figures {
		if name == "on-1" {
			continue
		}
		b.ReportMetric(f.maxPeak/base.maxPeak, name+"-peak-ratio")
		b.ReportMetric(f.sumCPU/base.sumCPU, name+"-replicas-cpu-ratio")
		b.ReportMetric(f.serverCPU/base.serverCPU, name+"-server-cpu-ratio")
		b.ReportMetric(f.serverPeak/base.serverPeak, name+"-server-peak-ratio")
		b.ReportMetric(f.receivedMB/base.receivedMB, name+"-received-ratio")
	}
}
