package engine_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// teamAuditIn is the team policy in audit mode watching the configmaps of ns.
func teamAuditIn(ns string) string { return strings.ReplaceAll(teamAudit, "%q", `"`+ns+`"`) }

// TestAuditDryRunWritesNoReport: with --dry-run the report writer sends its writes with
// dryRun=All, so the report it would write does not appear.
func TestAuditDryRunWritesNoReport(t *testing.T) {
	cp := controlplane.Require(t, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installReportCRDs(t, dyn)
	r := startEngine(t, map[string]string{}, func(c *engine.Config) { c.DryRun = true })
	ns := r.namespace(t, "audit-dry-run")
	r.create(t, configmapsGVR, configmap(ns, "bad", nil, nil))
	r.write(t, "team.js", teamAuditIn(ns))
	waitFor(t, "the report writer's first write", func() bool { w, _ := r.engine.AuditReportWrites(); return w > 0 })
	if _, err := dyn.Resource(reportGVR).Namespace(ns).Get(t.Context(), "jsinformer-team-js", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get the report with --dry-run: err = %v, want NotFound", err)
	}
}

// TestAuditRestartRewritesNothing: a runner started again over the same cluster, with the
// same scripts and objects, reads the reports there and writes none of them again; it leaves
// alone the report of a script it does not have (another runner's).
func TestAuditRestartRewritesNothing(t *testing.T) {
	cp := controlplane.Require(t, env)
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installReportCRDs(t, dyn)
	first := startEngine(t, map[string]string{}, nil)
	ns := first.namespace(t, "audit-restart")
	for i, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		labels := map[string]any{"team": "x"}
		if i%2 == 0 {
			labels = nil
		}
		first.create(t, configmapsGVR, configmap(ns, name, labels, nil))
	}
	scripts := map[string]string{"team.js": teamAuditIn(ns)}
	first.write(t, "team.js", scripts["team.js"])
	waitFor(t, "the first runner's report", func() bool {
		return len(first.engine.AuditResults("team.js")) == 8 && first.engine.AuditReportsCurrent()
	})
	before, err := dyn.Resource(reportGVR).Namespace(ns).Get(t.Context(), "jsinformer-team-js", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get the report: %v", err)
	}
	if stopped, err := first.stop(30e9); !stopped || err != nil {
		t.Fatalf("stop the first runner: stopped %v, err %v", stopped, err)
	}

	foreign := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
		"metadata": map[string]any{"name": "jsinformer-other-js", "namespace": ns,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "jsinformer", "jsinformer.dev/script": "other-js"}}}}
	if _, err := dyn.Resource(reportGVR).Namespace(ns).Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create another runner's report: %v", err)
	}
	reg := prometheus.NewRegistry()
	second := startEngine(t, scripts, func(c *engine.Config) { c.Registerer = reg })
	waitFor(t, "the second runner's initial pass, published", func() bool {
		return len(second.engine.AuditResults("team.js")) == 8 && second.engine.AuditReportsCurrent()
	})
	if a := second.engine.Status().Audit; a == nil || len(a.Scripts) != 1 || a.Scripts[0].InitialPass ||
		a.Scripts[0].Results["fail"] != 4 || a.Scripts[0].Results["pass"] != 4 || a.ReportsMissing {
		t.Errorf("status audit = %+v, want team.js done with 4 fail and 4 pass, reports written", a)
	}
	for result, want := range map[string]float64{"pass": 4, "fail": 4, "error": 0} {
		if got := metricValue(t, reg, "jsinformer_audit_results", map[string]string{"script": "team.js", "result": result}); got != want {
			t.Errorf("jsinformer_audit_results{script=team.js,result=%s} = %v, want %v", result, got, want)
		}
	}
	if writes, _ := second.engine.AuditReportWrites(); writes != 0 {
		t.Errorf("report writes after the restart = %d, want 0", writes)
	}
	if _, err := dyn.Resource(reportGVR).Namespace(ns).Get(t.Context(), "jsinformer-other-js", metav1.GetOptions{}); err != nil {
		t.Errorf("another runner's report (a script not in this folder): %v; want it left alone", err)
	}
	after, err := dyn.Resource(reportGVR).Namespace(ns).Get(t.Context(), "jsinformer-team-js", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get the report: %v", err)
	}
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("report resourceVersion %s → %s: rewritten though nothing changed", before.GetResourceVersion(), after.GetResourceVersion())
	}
}
