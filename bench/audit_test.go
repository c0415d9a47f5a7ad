package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// BenchmarkAudit measures continuous audit (admission.audit, docs/admission.md "Audit") over
// the seeded realistic Deployments with three policies (auditpolicy_test.go), in one run:
//
//   - engine: a runner in this process that already holds the Deployments (a handler script on
//     them). Each round saves the three policies (time from the first file written until every
//     report is written, AuditReportsCurrent), saves one again with changed messages, saves it
//     again with its results unchanged, flips the team label of the benchmark's own flip
//     Deployments at once and back at a steady rate (steady-state writes per object change),
//     and removes the policies. For each step: the report writes the runner counted, the
//     write requests to openreports.io kube-apiserver counted (apiserver_request_total), and
//     how many reports changed as a client watching them saw it (auditreports_test.go). Then
//     the write→handler latency (slices_test.go) alternates between no audit work, writes to
//     ConfigMaps that an audit script also audits, and passes of the three policies over
//     every Deployment run back to back (auditslices_test.go).
//   - process: whole runner processes with and without the three policies, alternating: the
//     kernel's peak RSS of each (getrusage), and for the auditing one the time from exec until
//     the reports hold every result (auditproc_test.go).
//
// The flip Deployments ($JSINFORMER_AUDIT_FLIPS, default 100) are created in namespace
// "bench" for the engine part and deleted after it; the seeded Deployments are not touched.
// $JSINFORMER_AUDIT_ROUNDS (default 3) sets the rounds of both parts.
func BenchmarkAudit(b *testing.B) {
	cp := seeded(b)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installReportCRDs(b, dyn)
	view := watchReports(b, cp)
	deleteAllReports(b, dyn, view)
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			auditEngine(b, cp, view)
		}
	})
	b.Run("process", func(b *testing.B) {
		for b.Loop() {
			auditProcesses(b, cp, view)
		}
	})
}

// auditRounds is $JSINFORMER_AUDIT_ROUNDS, or 3.
func auditRounds(b *testing.B) int { return envInt(b, "JSINFORMER_AUDIT_ROUNDS", 3) }

// auditFlips is $JSINFORMER_AUDIT_FLIPS, or 100.
func auditFlips(b *testing.B) int { return envInt(b, "JSINFORMER_AUDIT_FLIPS", 100) }

// auditTimeout bounds one step; far above any expected figure, it only turns a hang into a
// failure.
const auditTimeout = 3 * time.Minute

// auditRunner is the engine of the engine part, its scripts folder and log tap.
type auditRunner struct {
	e    *engine.Engine
	dir  string
	tap  *auditTap
	stop func() // idempotent
	rev  int    // the last revision written: every save is a new version
	// passed is, after current, the time from its start until no audit script was in its
	// initial pass.
	passed time.Duration
}

// startAuditRunner runs an engine on scripts and returns once it is ready; stop cancels and
// joins it.
func startAuditRunner(b *testing.B, cp *controlplane.ControlPlane, p *probe, scripts map[string]string) *auditRunner {
	b.Helper()
	r := &auditRunner{dir: b.TempDir(), tap: newAuditTap(p)}
	for name, src := range scripts {
		writeScript(b, r.dir, name, src)
	}
	e, err := engine.New(engine.Config{RESTConfig: cp.Config, ScriptsDir: r.dir, Logger: slog.New(r.tap), PaceGC: true})
	if err != nil {
		b.Fatal(err)
	}
	r.e = e
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }() // owned by r: stop cancels and waits for it
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				b.Errorf("runner: %v", err)
			}
		})
	}
	select {
	case <-r.tap.state.ready:
	case err := <-done:
		cancel()
		b.Fatalf("runner stopped before ready: %v\n%s", err, r.tap.problems())
	case <-time.After(readyTimeout):
		r.stop()
		b.Fatalf("runner not ready within %s\n%s", readyTimeout, r.tap.problems())
	}
	return r
}

// save writes the given policies at variant (each a new revision) and waits until every one
// is loaded and the reports are current; it returns the time from the first write.
func (r *auditRunner) save(files []string, variant int) (time.Duration, error) {
	var loaded []<-chan struct{}
	contents := map[string]string{}
	for _, f := range files {
		r.rev++
		contents[f] = auditPolicy(f, variant, r.rev)
		loaded = append(loaded, r.tap.expectLoaded(scriptVersion(contents[f])))
	}
	start := time.Now()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(r.dir, f), []byte(contents[f]), 0o644); err != nil {
			return 0, fmt.Errorf("write %s: %w", f, err)
		}
	}
	if err := waitClosed(auditTimeout, loaded...); err != nil {
		return 0, fmt.Errorf("load %v: %w\n%s", files, err, r.tap.problems())
	}
	return r.current(start)
}

// remove deletes the given policies and waits until they are unloaded and their reports gone
// from the runner's view; it returns the time from the first removal.
func (r *auditRunner) remove(files []string) (time.Duration, error) {
	var unloaded []<-chan struct{}
	for _, f := range files {
		unloaded = append(unloaded, r.tap.expectUnloaded(f))
	}
	start := time.Now()
	for _, f := range files {
		if err := os.Remove(filepath.Join(r.dir, f)); err != nil {
			return 0, fmt.Errorf("remove %s: %w", f, err)
		}
	}
	if err := waitClosed(auditTimeout, unloaded...); err != nil {
		return 0, fmt.Errorf("unload %v: %w\n%s", files, err, r.tap.problems())
	}
	return r.current(start)
}

// current waits until the runner's reports match every audit result (no initial pass under
// way) and returns the time since start. It also records in r.passed when it first saw no
// audit script in its initial pass (to 20 ms): the audit's share of the time, the rest
// being the writes.
func (r *auditRunner) current(start time.Time) (time.Duration, error) {
	end := start.Add(auditTimeout)
	r.passed = 0
	var polled time.Time
	for !r.e.AuditReportsCurrent() {
		if now := time.Now(); r.passed == 0 && now.Sub(polled) >= 20*time.Millisecond {
			polled = now
			if !r.inPass() {
				r.passed = now.Sub(start)
			}
		}
		if time.Now().After(end) {
			return 0, fmt.Errorf("reports not current within %s\n%s", auditTimeout, r.tap.problems())
		}
		time.Sleep(2 * time.Millisecond)
	}
	took := time.Since(start)
	if r.passed == 0 {
		r.passed = took
	}
	return took, nil
}

// inPass reports whether an audit script is in its initial pass.
func (r *auditRunner) inPass() bool {
	if a := r.e.Status().Audit; a != nil {
		for _, s := range a.Scripts {
			if s.InitialPass {
				return true
			}
		}
	}
	return false
}

// fails is how many of script's results are fail.
func (r *auditRunner) fails(script string) int {
	n := 0
	for _, res := range r.e.AuditResults(script) {
		if res.Result == "fail" {
			n++
		}
	}
	return n
}

// auditEngine is the engine part of BenchmarkAudit.
func auditEngine(b *testing.B, cp *controlplane.ControlPlane, view *reportView) {
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	k := auditFlips(b)
	flips := createFlips(b, dyn, k)
	p := newProbe()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	nsQuiet, nsAudited := sliceNamespace(b, cp, "audit-quiet"), sliceNamespace(b, cp, "audit-cm")
	startArrivals(b, ctx, &wg, cp, p)
	r := startAuditRunner(b, cp, p, map[string]string{"deployments.js": auditedHandlerScript,
		"lat-quiet.js": latencyScript(nsQuiet), "lat-audited.js": latencyScript(nsAudited)})
	defer r.stop()
	m := newAuditMeter(b, cp, r, view)
	variant := 0
	for round := range auditRounds(b) {
		variant++
		m.step("save", auditExpect(k, 0), func() (time.Duration, error) { return r.save(auditPolicies, variant) })
		variant++
		m.step("resave-changed", auditExpect(k, 0), func() (time.Duration, error) { return r.save(auditPolicies[:1], variant) })
		m.step("resave-same", auditExpect(k, 0), func() (time.Duration, error) { return r.save(auditPolicies[:1], variant) })
		m.step("flip-burst", auditExpect(k, k), func() (time.Duration, error) { return flipTeams(r, dyn, flips, "unregistered", 0, k) })
		m.step("flip-spread", auditExpect(k, 0), func() (time.Duration, error) {
			return flipTeams(r, dyn, flips, "payments", flipSpreadGap, 0)
		})
		m.step("remove", nil, func() (time.Duration, error) { return r.remove(auditPolicies) })
		if n := view.reports(); n != 0 {
			b.Fatalf("round %d: %d reports left after the policies were removed", round, n)
		}
	}
	m.report(k)
	variant++
	if _, err := r.save(auditPolicies, variant); err != nil {
		b.Fatal(err)
	}
	auditSlices(b, cp, p, r, nsQuiet, nsAudited, variant)
	r.stop()
	deleteAllReports(b, dyn, view)
}
