package bench

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// apiserverRounds is how many times each contender syncs against a freshly started
// kube-apiserver in BenchmarkAPIServerCost, unless $JSINFORMER_APISERVER_ROUNDS says.
const apiserverRounds = 3

// serverSample is what one contender's initial sync cost kube-apiserver, and the contender's
// own figures.
type serverSample struct {
	peak   int64         // the apiserver's peak RSS during the sync minus its RSS before
	cpu    time.Duration // the apiserver's CPU during the sync, its idle rate before subtracted
	client procSample
}

// BenchmarkAPIServerCost measures what each contender's initial sync of the realistic
// Deployments costs kube-apiserver: the increase of its peak RSS (VmHWM, reset through
// /proc/PID/clear_refs just before the contender starts, minus VmRSS then) and its CPU
// (utime+stime from /proc/PID/stat, minus its idle rate measured while it settled). Every
// round restarts kube-apiserver (etcd keeps the objects) and waits until its watch cache
// serves the Deployments and its RSS has settled, so no contender inherits a heap another
// one grew. Contenders: the runner as it is (a LIST from the watch cache, decoded as it
// arrives), the runner with --streaming-lists (WatchList: sendInitialEvents), a bare
// client-go informer with client-go's defaults (this test binary, re-executed), and the
// Node.js client. The contenders' own wall time, peak RSS and CPU are reported too. More,
// chosen by $JSINFORMER_APISERVER_CONTENDERS (a comma list of names, those four by default):
// runner-nogzip (its kubeconfig sets disable-compression), runner-http1 (DISABLE_HTTP2=1:
// watches too go over HTTP/1.1), and baseline, the runner of $JSINFORMER_BENCH_BASELINE.
func BenchmarkAPIServerCost(b *testing.B) {
	installNodePeer(b)
	runner := deployedCopy(b, buildRunner(b))
	all := []process{
		{"runner", runnerCommand(runner), false},
		{"runner-watchlist", runnerCommand(runner, "--streaming-lists"), false},
		{"runner-nogzip", withoutCompression(runnerCommand(runner)), false},
		{"runner-http1", withEnv(runnerCommand(runner), "DISABLE_HTTP2=1"), false},
		{"client-go", clientGoCommand(deployedCopy(b, testExecutable(b))), true},
		{"node", nodeCommand, true},
	}
	if bin, _ := baselineRunner(b); bin != "" {
		all = append(all, process{"baseline", runnerCommand(deployedCopy(b, bin)), false})
	}
	processes := selectProcesses(b, all, "runner,runner-watchlist,client-go,node")
	cp := seededShape(b, realistic)
	b.Logf("kube-apiserver %s, %d Deployments", serverVersion(b, cp), seedCount)
	results := make([][]serverSample, len(processes))
	for b.Loop() {
		for round := range envInt(b, "JSINFORMER_APISERVER_ROUNDS", apiserverRounds) {
			line := fmt.Sprintf("round %d:", round+1)
			// Each round starts with the next contender: a contender's place in the round
			// moved the server's peak more than some differences between contenders did.
			for k := range processes {
				i := (round + k) % len(processes)
				p := processes[i]
				s := serverCostOf(b, cp, p)
				results[i] = append(results[i], s)
				line += fmt.Sprintf(" | %s server +%.0f MB cpu %.0f ms, own %.0f ms %.0f MB",
					p.name, mb(s.peak), ms(s.cpu), ms(s.client.wall), mb(s.client.hwm))
			}
			b.Log(line)
		}
	}
	for i, p := range processes {
		reportServerCost(b, p.name, results[i])
	}
}

func reportServerCost(b *testing.B, name string, samples []serverSample) {
	var peak, cpu, wall, rss []float64
	for _, s := range samples {
		peak = append(peak, mb(s.peak))
		cpu = append(cpu, ms(s.cpu))
		wall = append(wall, ms(s.client.wall))
		rss = append(rss, mb(s.client.hwm)) // its own peak, not ru_maxrss (procSample.hwm)
	}
	b.ReportMetric(median(peak), name+"-server-peak-MB")
	b.ReportMetric(median(cpu), name+"-server-cpu-ms")
	b.ReportMetric(median(wall), name+"-ms")
	b.ReportMetric(median(rss), name+"-peak-RSS-MB")
}

// serverCostOf restarts kube-apiserver, waits until it has settled, and runs p once.
func serverCostOf(b *testing.B, cp *controlplane.ControlPlane, p process) serverSample {
	b.Helper()
	if err := cp.RestartAPIServer(b.Context()); err != nil {
		b.Fatalf("restart kube-apiserver: %v", err)
	}
	primeWatchCache(b, cp)
	pid := cp.APIServerPID()
	idleRate := settle(b, pid)
	before := readServer(b, pid)
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		b.Fatalf("reset kube-apiserver's peak RSS: %v", err)
	}
	client := runProcess(b, p.command(b, cp, realistic), p.exitsOwn)
	after := readServer(b, pid)
	cpu := after.cpu - before.cpu - time.Duration(idleRate*float64(after.at.Sub(before.at)))
	return serverSample{peak: after.hwm - before.rss, cpu: max(cpu, 0), client: client}
}

// primeWatchCache returns once the watch cache serves the Deployments: a list at
// resourceVersion "0" waits for it, and a selector that matches nothing keeps the answer
// (and the apiserver's work for it) small.
func primeWatchCache(b *testing.B, cp *controlplane.ControlPlane) {
	b.Helper()
	_, err := dynamic.NewForConfigOrDie(cp.Config).Resource(deploymentsGVR).Namespace(realistic.namespace).
		List(b.Context(), metav1.ListOptions{ResourceVersion: "0", LabelSelector: "jsinformer-bench-none=x"})
	if err != nil {
		b.Fatalf("prime kube-apiserver's watch cache: %v", err)
	}
}

// settle polls the apiserver's RSS until two readings a second apart differ by less than
// 1 MB (up to a minute), and returns its CPU rate (CPU seconds per second) over the last one.
func settle(b *testing.B, pid int) float64 {
	b.Helper()
	prev := readServer(b, pid)
	deadline := time.Now().Add(time.Minute)
	for {
		time.Sleep(time.Second) // a sampling interval: what is awaited is a steady reading
		cur := readServer(b, pid)
		rate := float64(cur.cpu-prev.cpu) / float64(cur.at.Sub(prev.at))
		if d := cur.rss - prev.rss; (d < 1<<20 && d > -(1<<20)) || time.Now().After(deadline) {
			return rate
		}
		prev = cur
	}
}

type serverReading struct {
	at       time.Time
	rss, hwm int64
	cpu      time.Duration
}

// readProc reads a process's resident set, its peak and its CPU from /proc.
func readServer(b *testing.B, pid int) serverReading {
	b.Helper()
	r := serverReading{at: time.Now()}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("read kube-apiserver's status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		switch f := strings.Fields(line); {
		case len(f) == 3 && f[0] == "VmRSS:":
			r.rss = kib(b, f[1])
		case len(f) == 3 && f[0] == "VmHWM:":
			r.hwm = kib(b, f[1])
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("read kube-apiserver's stat: %v", err)
	}
	// Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	r.cpu = clockTicks(b, f[11]) + clockTicks(b, f[12])
	return r
}

func kib(b *testing.B, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		b.Fatalf("parse %q: %v", s, err)
	}
	return n << 10
}

// clockTicks converts /proc's CPU times, in USER_HZ (100 on Linux), to a duration.
func clockTicks(b *testing.B, s string) time.Duration {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		b.Fatalf("parse %q: %v", s, err)
	}
	return time.Duration(n) * 10 * time.Millisecond
}

func serverVersion(b *testing.B, cp *controlplane.ControlPlane) string {
	v, err := kubernetes.NewForConfigOrDie(cp.Config).Discovery().ServerVersion()
	if err != nil {
		b.Fatalf("read kube-apiserver's version: %v", err)
	}
	return v.GitVersion
}

// selectProcesses keeps the contenders $JSINFORMER_APISERVER_CONTENDERS names (a comma list;
// def when unset), in the order given there.
func selectProcesses(b *testing.B, all []process, def string) []process {
	names := cmp.Or(os.Getenv("JSINFORMER_APISERVER_CONTENDERS"), def)
	var out []process
	for name := range strings.SplitSeq(names, ",") {
		i := slices.IndexFunc(all, func(p process) bool { return p.name == name })
		if i < 0 {
			b.Fatalf("$JSINFORMER_APISERVER_CONTENDERS: unknown contender %q", name)
		}
		out = append(out, all[i])
	}
	return out
}

// withoutCompression runs cmd with a copy of the control plane's kubeconfig that sets
// disable-compression on its cluster, so the client asks for responses without gzip.
func withoutCompression(cmd func(*testing.B, *controlplane.ControlPlane, *shape) *exec.Cmd) func(*testing.B, *controlplane.ControlPlane, *shape) *exec.Cmd {
	return func(b *testing.B, cp *controlplane.ControlPlane, sh *shape) *exec.Cmd {
		cfg, err := clientcmd.LoadFromFile(cp.Kubeconfig)
		if err != nil {
			b.Fatalf("load kubeconfig: %v", err)
		}
		for _, c := range cfg.Clusters {
			c.DisableCompression = true
		}
		path := filepath.Join(b.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			b.Fatalf("write kubeconfig: %v", err)
		}
		c := cmd(b, cp, sh)
		for i, a := range c.Args {
			if a == cp.Kubeconfig {
				c.Args[i] = path
			}
		}
		return c
	}
}

// withEnv runs cmd with env added to the benchmark's environment.
func withEnv(cmd func(*testing.B, *controlplane.ControlPlane, *shape) *exec.Cmd, env ...string) func(*testing.B, *controlplane.ControlPlane, *shape) *exec.Cmd {
	return func(b *testing.B, cp *controlplane.ControlPlane, sh *shape) *exec.Cmd {
		c := cmd(b, cp, sh)
		c.Env = append(os.Environ(), env...)
		return c
	}
}
