package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/engine/internal/audit"
	"github.com/jsinformer/jsinformer/status"
)

// auditWindow is how long audit results coalesce before the reports are written.
const auditWindow = time.Second

// startReportWriter runs the Writer that publishes results as openreports.io reports, when
// the engine talks to a cluster; returns what stops and waits for it.
func (e *Engine) startReportWriter(ctx context.Context, results *audit.Results) (stop func()) {
	if e.discovery == nil || e.writeConfig == nil {
		return func() {}
	}
	client, err := dynamic.NewForConfig(e.writeConfig) // fenced like every write client of the engine

	if err != nil {
		e.logger.Warn("audit: create the reports client", "error", err.Error())
		return func() {}
	}
	w := audit.NewWriter(audit.WriterConfig{
		Client: client, Results: results, Window: auditWindow, Logger: e.logger, DryRun: e.cfg.DryRun,
		Leading:   func() bool { return e.lead == nil || e.lead.Leading() },
		HasCRDs:   e.hasReportCRDs,
		Ready:     e.readyOnce.Load,
		Owns:      e.ownsScript,
		OnMissing: e.reportsMissing.Store,
		// Under --sharded a report is written by the owner of its key (audit.ReportKey), held
		// like a handler call's, each write bounded below the ring's drain timeout.
		Begin: e.shard.Begin, Generation: e.shardGeneration, WriteTimeout: e.cfg.HandlerTimeout,
	})
	e.reportWriter.Store(w)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx) })
	return func() { cancel(); wg.Wait() }
}

// shardGeneration counts the ring changes this replica applied; 0 unsharded.
func (e *Engine) shardGeneration() uint64 {
	if e.shard == nil {
		return 0
	}
	_, gen := e.shard.Members()
	return gen
}

// hasReportCRDs reports whether the cluster serves openreports.io/v1alpha1 reports and
// clusterreports.
func (e *Engine) hasReportCRDs(context.Context) (bool, error) {
	list, err := e.discovery.ServerResourcesForGroupVersion(audit.ReportGVR.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discover %s: %w", audit.ReportGVR.GroupVersion(), err)
	}
	found := 0
	for _, r := range list.APIResources {
		if r.Name == audit.ReportGVR.Resource || r.Name == audit.ClusterReportGVR.Resource {
			found++
		}
	}
	return found == 2, nil
}

// AuditReportsMissing reports whether audit results are kept in memory only because the
// cluster does not serve the openreports.io CRDs (deploy/crds/openreports.yaml).
func (e *Engine) AuditReportsMissing() bool { return e.reportsMissing.Load() }

// AuditReportWrites is how many report writes (applies and deletes, dry-run ones included)
// the report writer made, and how many times it found the reports up to date with the
// results after writing what differed (its passes); zeros without a cluster. For tests and
// benchmarks.
func (e *Engine) AuditReportWrites() (writes, passes int) {
	if w := e.reportWriter.Load(); w != nil {
		return w.Writes(), w.Passes()
	}
	return 0, 0
}

// AuditReportsCurrent reports whether the report writer has read the reports and they match
// every audit result (no initial pass under way); false without a cluster.
func (e *Engine) AuditReportsCurrent() bool {
	w := e.reportWriter.Load()
	return w != nil && w.Current()
}

// auditStatus is the audit part of Status: nil while no script audits and the CRDs are not
// known to be missing.
func (e *Engine) auditStatus() *status.AuditStatus {
	st := &status.AuditStatus{ReportsMissing: e.reportsMissing.Load()}
	if s := e.audits.Load(); s != nil {
		counts := s.results.Counts()
		for _, script := range slices.Sorted(maps.Keys(counts)) {
			audited, objects, passing := s.results.Progress(script)
			st.Scripts = append(st.Scripts, status.AuditScriptStatus{Script: script, Results: counts[script],
				InitialPass: passing, Audited: audited, Objects: objects})
		}
	}
	if !st.ReportsMissing && len(st.Scripts) == 0 {
		return nil
	}
	return st
}

// ownsScript reports whether label (a report's audit.ScriptLabel) names one of the engine's
// scripts (loaded or failed).
func (e *Engine) ownsScript(label string) bool {
	_, scripts := e.book.Scripts(func(string) map[string]status.HandlerCounts { return nil })
	return slices.ContainsFunc(scripts, func(s status.ScriptStatus) bool { return audit.ScriptLabelValue(s.Name) == label })
}
