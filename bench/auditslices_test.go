package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// auditSlices is the latency part of BenchmarkAudit's engine part: the write→handler latency
// of the runner r, which holds the three policies on the seeded Deployments, alternating in
// short slices (slices_test.go) between
//
//   - no-audit: writes to nsQuiet's ConfigMaps, which no policy audits (the policies idle);
//   - audited: writes to nsAudited's ConfigMaps, which an audit script audits too (each write
//     an audit call, about half of them flipping a result, the namespace's report rewritten
//     in every window);
//   - re-audit: writes to nsQuiet while the three policies are saved again and again (a new
//     revision, the same results): back-to-back initial passes of the three over every
//     Deployment, each pass a new version loaded (compiled, its runtime made), no report
//     written (the writes of a save that changes results are the steps' figures).
//
// It also reports the report writes per second and per ConfigMap change of the audited
// slices, and the passes done during the re-audit slices. $JSINFORMER_LATENCY_ROUNDS
// (default 5) and $JSINFORMER_SLICE_SECONDS (default 5) set the run's shape.
func auditSlices(b *testing.B, cp *controlplane.ControlPlane, p *probe, r *auditRunner, nsQuiet, nsAudited string, variant int) {
	cfg := sliceConfigFromEnv(b, 5, 5*time.Second)
	loaded := r.tap.expectLoaded(scriptVersion(configMapAuditScript(nsAudited)))
	start := time.Now()
	writeScript(b, r.dir, "cm-audit.js", configMapAuditScript(nsAudited))
	if err := waitClosed(auditTimeout, loaded); err != nil {
		b.Fatal(err)
	}
	if _, err := r.current(start); err != nil {
		b.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cp.Config)

	var audited struct {
		writes, api int
		seconds     float64
	}
	countWrites := func() func() {
		w0, _ := r.e.AuditReportWrites()
		a0 := apiReportWrites(b, cs)
		t0 := time.Now()
		return func() {
			w1, _ := r.e.AuditReportWrites()
			audited.writes += w1 - w0
			audited.api += apiReportWrites(b, cs) - a0
			audited.seconds += time.Since(t0).Seconds()
		}
	}

	var passes []float64
	var passErr error
	rescans := func() func() {
		ctx, stop := context.WithCancel(context.Background())
		var done sync.WaitGroup
		done.Go(func() { // owned by this contender's slice: joined by its detach
			for ctx.Err() == nil && passErr == nil {
				took, err := r.save(auditPolicies, variant) // the same variant: a new revision, the same results
				if err != nil {
					passErr = err
					return
				}
				passes = append(passes, ms(took))
			}
		})
		return func() { stop(); done.Wait() } // the pass under way is finished: the next slice starts quiet
	}

	contenders := []sliceContender{{name: "no-audit", ns: nsQuiet}, {name: "audited", ns: nsAudited, attach: countWrites},
		{name: "re-audit", ns: nsQuiet, attach: rescans}}
	recs := runSlices(b, cp, p, contenders, cfg)
	if passErr != nil {
		b.Fatalf("re-audit passes: %v", passErr)
	}
	reportSlices(b, contenders, recs, p, cfg)
	sent := 0
	for _, rec := range recs {
		if rec.contender == 1 {
			sent += rec.sent
		}
	}
	if audited.api != audited.writes {
		b.Errorf("audited slices: kube-apiserver counted %d report writes, the runner %d", audited.api, audited.writes)
	}
	b.ReportMetric(float64(audited.api)/audited.seconds, "audited-report-writes/s")
	b.ReportMetric(float64(audited.api)/float64(sent), "audited-writes/change")
	b.ReportMetric(float64(len(passes)), "re-audit-passes")
	b.ReportMetric(median(passes), "re-audit-pass-ms")
	b.Logf("audited slices: %d ConfigMap writes audited, %d report writes (kube-apiserver: %d) in %.0f s; re-audit slices: %d passes of the three policies over %d Deployments, median %.0f ms",
		sent, audited.writes, audited.api, audited.seconds, len(passes), seedCount, median(passes))
}
