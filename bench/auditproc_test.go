package bench

import (
	"fmt"
	"os/exec"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// auditProcesses is the process part of BenchmarkAudit: the runner binary (a deployed copy)
// on the seeded Deployments with a counting handler (processScript), and the same with the
// three policies beside it, alternating round by round, the order rotated. Before each
// auditing round the runner's reports are deleted, so that it writes every one (a first
// start, the most it writes); it is stopped once the reports hold every result, the other
// once it has handled every Deployment. Peak RSS is the kernel's for the whole process
// (VmHWM, read just before the process is told to stop: the most resident memory at any
// moment of its run, not its live heap). The getrusage figure (ru_maxrss) is logged beside
// it but not used: for a child of this process it includes this process's own peak, which
// the engine part raised (procSample.hwm).
func auditProcesses(b *testing.B, cp *controlplane.ControlPlane, view *reportView) {
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	deleteAllReports(b, dyn, view)
	bin := deployedCopy(b, buildRunner(b))
	want := auditExpect(0, 0)
	withPolicies := map[string]string{"count.js": processScript()}
	for _, f := range auditPolicies {
		withPolicies[f] = auditPolicy(f, 1, 1)
	}
	contenders := []struct {
		name    string
		scripts map[string]string
	}{{"no-audit", map[string]string{"count.js": processScript()}}, {"audit", withPolicies}}
	samples := make([][]procSample, len(contenders))
	for round := range auditRounds(b) {
		line := fmt.Sprintf("round %d:", round+1)
		for k := range contenders {
			i := (k + round) % len(contenders)
			c := contenders[i]
			var until func() error
			if c.name == "audit" {
				deleteAllReports(b, dyn, view)
				until = func() error { return waitReports(view, want, auditTimeout) }
			}
			s := runProcessUntil(b, auditRunnerCommand(b, bin, cp, c.scripts), false, until)
			samples[i] = append(samples[i], s)
			line += fmt.Sprintf(" | %s %.0f ms to every object, %.0f ms to every report, peak RSS %.1f MB (ru_maxrss %.1f MB), cpu %.0f ms",
				c.name, ms(s.wall), ms(s.until), mb(s.hwm), mb(s.rss), ms(s.cpu))
		}
		b.Log(line)
	}
	rss := func(i int) (out []float64) {
		for _, s := range samples[i] {
			out = append(out, mb(s.hwm))
		}
		return out
	}
	of := func(i int, f func(procSample) time.Duration) (out []float64) {
		for _, s := range samples[i] {
			out = append(out, ms(f(s)))
		}
		return out
	}
	cpu := func(s procSample) time.Duration { return s.cpu }
	for i, c := range contenders {
		b.ReportMetric(median(rss(i)), c.name+"-peak-RSS-MB")
		b.ReportMetric(median(of(i, cpu)), c.name+"-cpu-ms")
	}
	b.ReportMetric(median(of(1, func(s procSample) time.Duration { return s.until })), "audit-reports-written-ms")
	b.ReportMetric(median(rss(1))-median(rss(0)), "audit-added-peak-RSS-MB")
	ci := ratioCI(rss(1), rss(0))
	b.ReportMetric(ci.est, "peak-RSS-ratio-audit-vs-no-audit")
	b.ReportMetric(ci.lo, "peak-RSS-ratio-lo")
	b.ReportMetric(ci.hi, "peak-RSS-ratio-hi")
	deleteAllReports(b, dyn, view)
}

// auditRunnerCommand runs the runner binary on the scripts in a new folder, the Deployments
// of namespace "bench" being the default watch.
func auditRunnerCommand(b *testing.B, bin string, cp *controlplane.ControlPlane, scripts map[string]string) *exec.Cmd {
	dir := b.TempDir()
	for name, src := range scripts {
		writeScript(b, dir, name, src)
	}
	return exec.CommandContext(b.Context(), bin, "--kubeconfig", cp.Kubeconfig, "-n", benchNamespace,
		"--gvr", "apps/v1/deployments", "--scripts", dir)
}

// waitReports waits until view's reports hold want's results.
func waitReports(view *reportView, want map[string]map[string]int, timeout time.Duration) error {
	end := time.Now().Add(timeout)
	for !holds(view.snapshot(), want) {
		if time.Now().After(end) {
			got, _ := totals(view.snapshot())
			return fmt.Errorf("the reports hold %s, want %s, after %s", describeCounts(got), describeCounts(want), timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}
