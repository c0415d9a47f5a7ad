package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// BenchmarkAdmissionProcess: the runner as it is deployed, a process of its own (the built
// binary with --webhook-url), answering one trivial validate for the ConfigMaps this process
// creates at admissionRate a second, as BenchmarkAdmission's writer does. The runner's own
// time per review is read from its jsinformer_admission_request_duration_seconds (from the
// body read whole to the answer handed to the connection), the deltas of each slice. Slices
// alternate ($JSINFORMER_ADMISSION_SECONDS each, $JSINFORMER_ADMISSION_ROUNDS rounds, the
// order rotated each round) between three kinds of create:
//
//	none      no webhook matches
//	validate  a trivial validate (validate.js)
//	busy      a trivial validate in a script whose reconcile spins 2 s per key, kept busy by
//	          the creates themselves (busy.js, as in BenchmarkAdmission)
//
// each with the processes placed three ways (suffix):
//
//	(none)     every process on every CPU at the same weight (as in BenchmarkAdmission): the
//	           runner waits for a CPU whenever kube-apiserver and etcd hold both
//	-apart     the runner alone on the last CPU; kube-apiserver, etcd and this process (the
//	           writer) on the others: a core of its own, the control plane on other cores
//	-weighted  every process on every CPU, kube-apiserver, etcd and the writer at nice 19:
//	           the runner first when it is runnable, as a pod's CPU request weighs it against
//	           best-effort neighbours (cpu.weight), the others using what it leaves
//
// Reported per contender: the client's create p50 and the p50 added over none of the same
// placement; for the validates, the runner's p50 and p99 (interpolated within the histogram's
// buckets, as histogram_quantile does) with a 95 % bootstrap interval over rounds, and the
// runner's CPU and collections per second of the slice. $JSINFORMER_ADMISSION_GOMAXPROCS, when
// set, is the runner's GOMAXPROCS.
func BenchmarkAdmissionProcess(b *testing.B) {
	cp := controlplane.Require(b, env)
	slice, rounds := envInt(b, "JSINFORMER_ADMISSION_SECONDS", 10), envInt(b, "JSINFORMER_ADMISSION_ROUNDS", 3)
	if runtime.NumCPU() < 2 {
		b.Fatal("BenchmarkAdmissionProcess places the runner on a CPU of its own: it needs two or more")
	}
	client := writerClient(b, cp, "admp-", []string{"none", "validate", "busy"})
	bin := deployedCopy(b, buildRunner(b))
	for b.Loop() {
		r := startAdmissionProcess(b, cp, client, bin)
		results := map[string]*procAdmission{}
		var n atomic.Int64
		for round := range rounds {
			for _, c := range rotated(admissionPlacements, round) {
				if results[c] == nil {
					results[c] = &procAdmission{}
				}
				results[c].add(runAdmissionSlice(b, cp, client, r, c, &n, time.Duration(slice)*time.Second))
			}
		}
		r.stop()
		reportAdmissionProcess(b, results, rounds*slice)
	}
}

// admissionPlacements are BenchmarkAdmissionProcess's contenders: each kind of create placed
// each way (placement).
var admissionPlacements = func() []string {
	var out []string
	for _, how := range []string{"", "-apart", "-weighted"} {
		for _, kind := range []string{"none", "validate", "busy"} {
			out = append(out, kind+how)
		}
	}
	return out
}()

// admissionProcess is the runner process BenchmarkAdmissionProcess measures.
type admissionProcess struct {
	cmd         *exec.Cmd
	logs        *watchedLogs
	metricsAddr string
	debugAddr   string // with --pprof, when $JSINFORMER_BENCH_PROFILE is set; else empty
	profiled    bool   // the first validate slice has been profiled
	name        string // of its webhook configurations
	client      kubernetes.Interface
	b           *testing.B
	stopped     bool
}

// startAdmissionProcess starts the runner on validate.js and waits until the API server calls it.
func startAdmissionProcess(b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface, bin string) *admissionProcess {
	b.Helper()
	dir := b.TempDir()
	for name, src := range admissionScripts() {
		if name == "validate.js" || name == "busy.js" {
			writeScript(b, dir, name, strings.ReplaceAll(src, `"adm-`, `"admp-`))
		}
	}
	hook := freeAddr(b)
	r := &admissionProcess{metricsAddr: freeAddr(b), name: "jsinformer-bench-process", client: client, b: b}
	args := []string{"--kubeconfig", cp.Kubeconfig, "--scripts", dir, "--log-format", "json",
		"--metrics-addr", r.metricsAddr, "--debug-addr", "", "--webhook-addr", hook, "--webhook-url", "https://" + hook, "--webhook-name", r.name}
	if os.Getenv(profileEnv) != "" {
		r.debugAddr = freeAddr(b)
		args = append(args, "--debug-addr", r.debugAddr, "--pprof")
	}
	r.cmd = exec.CommandContext(b.Context(), bin, args...)
	if procs := os.Getenv("JSINFORMER_ADMISSION_GOMAXPROCS"); procs != "" {
		r.cmd.Env = append(os.Environ(), "GOMAXPROCS="+procs)
	}
	r.logs = startWatched(b, r.cmd)
	b.Cleanup(r.stop) // on a failure too: the configurations would outlive the runner
	r.logs.waitReady(b)
	cms := client.CoreV1().ConfigMaps("admp-validate")
	for deadline := time.Now().Add(time.Minute); r.answers(b).count() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the API server did not call the runner within a minute:\n%s", r.logs.tail)
		}
		_, _ = cms.Create(b.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "warm-"}}, metav1.CreateOptions{})
	}
	clearSlice(b, cms)
	return r
}

// stop stops the runner and removes its configurations, once.
func (r *admissionProcess) stop() {
	if r.stopped {
		return
	}
	r.stopped = true
	r.logs.stop(r.b, r.cmd)
	_ = r.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), r.name, metav1.DeleteOptions{})
	_ = r.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), r.name, metav1.DeleteOptions{})
}

// profile CPU-profiles the runner during the first "validate" slice into
// $JSINFORMER_BENCH_PROFILE/admission-cpu.pprof when that is set; the function returned waits
// for the profile.
func (r *admissionProcess) profile(b *testing.B, c string, d time.Duration) func() {
	b.Helper()
	if r.debugAddr == "" || r.profiled || c != "validate" {
		return func() {}
	}
	r.profiled = true
	profile := getLater(b, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", r.debugAddr, max(int(d.Seconds())-1, 1)))
	return func() {
		if err := os.WriteFile(filepath.Join(os.Getenv(profileEnv), "admission-cpu.pprof"), profile(), 0o644); err != nil {
			b.Fatalf("write the profile: %v", err)
		}
	}
}

// answers scrapes the runner's histogram of its own time per validate review.
func (r *admissionProcess) answers(b *testing.B) bucketCounts {
	b.Helper()
	return parseBuckets(b, string(httpGet(b, "http://"+r.metricsAddr+"/metrics")),
		`jsinformer_admission_request_duration_seconds_bucket{webhook="validate",le="`)
}

// admissionSlice is what one slice measured.
type admissionSlice struct {
	api     []float64    // the client's create latencies, ms
	answers bucketCounts // the runner's reviews in the slice, by bucket
	created int
	cpuMS   float64 // the runner's CPU in the slice
	gc      float64 // the runner's collections in the slice
}

// runAdmissionSlice places the processes as contender c says and creates ConfigMaps for d.
func runAdmissionSlice(b *testing.B, cp *controlplane.ControlPlane, client kubernetes.Interface, r *admissionProcess, c string, n *atomic.Int64, d time.Duration) admissionSlice {
	b.Helper()
	kind, how, _ := strings.Cut(c, "-")
	placement(b, cp, r.cmd.Process.Pid, how)
	defer placement(b, cp, r.cmd.Process.Pid, "")
	cms := client.CoreV1().ConfigMaps("admp-" + kind)
	before, counters := r.answers(b), scrapeRunner(b, r.metricsAddr)
	profiled := r.profile(b, c, d)
	// busy.js's reconcile spins 2 s per key, but not past this slice's end.
	data := map[string]string{"until": strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10)}
	lat, created := createAtRate(b, cms, n, d, data)
	profiled()
	after, counters1 := r.answers(b), scrapeRunner(b, r.metricsAddr)
	clearSlice(b, cms)
	return admissionSlice{api: lat, answers: after.minus(before), created: created,
		cpuMS: (counters1.cpu - counters.cpu) * 1000, gc: counters1.gc - counters.gc}
}

// procAdmission gathers one contender's slices.
type procAdmission struct{ slices []admissionSlice }

func (p *procAdmission) add(s admissionSlice) { p.slices = append(p.slices, s) }

func reportAdmissionProcess(b *testing.B, results map[string]*procAdmission, seconds int) {
	for _, c := range admissionPlacements {
		var api []float64
		var created int
		var cpu, gc float64
		rounds := make([]bucketCounts, 0, len(results[c].slices))
		for _, s := range results[c].slices {
			api, created, cpu, gc = append(api, s.api...), created+s.created, cpu+s.cpuMS, gc+s.gc
			rounds = append(rounds, s.answers)
		}
		b.ReportMetric(percentile(api, 50), c+"_api_p50_ms")
		b.ReportMetric(float64(created)/float64(seconds), c+"_creates/s")
		kind, how, _ := strings.Cut(c, "-")
		if kind == "none" {
			continue
		}
		base := strings.TrimSuffix("none-"+how, "-")
		var baseAPI []float64
		for _, s := range results[base].slices {
			baseAPI = append(baseAPI, s.api...)
		}
		b.ReportMetric(percentile(api, 50)-percentile(baseAPI, 50), c+"_added_p50_ms")
		all := sumBuckets(rounds)
		b.ReportMetric(all.quantile(0.5)*1e6, c+"_runner_p50_us")
		p99 := bucketCI(rounds, 0.99)
		b.ReportMetric(p99.est*1e6, c+"_runner_p99_us")
		b.ReportMetric(p99.lo*1e6, c+"_runner_p99_lo_us")
		b.ReportMetric(p99.hi*1e6, c+"_runner_p99_hi_us")
		b.ReportMetric(all.count()/float64(max(created, 1)), c+"_reviews_per_create")
		b.ReportMetric(cpu/float64(seconds), c+"_runner_cpu_ms/s")
		b.ReportMetric(gc/float64(seconds), c+"_runner_gc/s")
	}
}

// placement places the runner (pid), the control plane and this process as how says: "apart",
// "weighted" or "" (every process on every CPU at nice 0).
func placement(b *testing.B, cp *controlplane.ControlPlane, pid int, how string) {
	b.Helper()
	all := make([]int, runtime.NumCPU())
	for i := range all {
		all[i] = i
	}
	runner, others, nice := all, all, 0
	switch how {
	case "apart":
		runner, others = all[len(all)-1:], all[:len(all)-1]
	case "weighted":
		nice = 19
	}
	place(b, pid, runner...)
	for _, other := range []int{cp.APIServerPID(), cp.EtcdPID(), os.Getpid()} {
		place(b, other, others...)
		renice(b, other, nice)
	}
}
