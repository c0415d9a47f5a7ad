package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/engine/internal/audit"
)

// auditWindow is how long audit results coalesce before the reports are written.
const auditWindow = time.Second

// startReportWriter runs the Writer that publishes results as openreports.io reports, when
// the engine talks to a cluster; returns what stops and waits for it.
func (e *Engine) startReportWriter(ctx context.Context, results *audit.Results) (stop func()) {
	if e.discovery == nil || e.cfg.RESTConfig == nil {
		return func() {}
	}
	client, err := dynamic.NewForConfig(e.cfg.RESTConfig)
	if err != nil {
		e.logger.Warn("audit: create the reports client", "error", err.Error())
		return func() {}
	}
	w := audit.NewWriter(audit.WriterConfig{
		Client: client, Results: results, Window: auditWindow, Logger: e.logger,
		Leading:   func() bool { return e.lead == nil || e.lead.Leading() },
		HasCRDs:   e.hasReportCRDs,
		OnMissing: e.reportsMissing.Store,
	})
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx) })
	return func() { cancel(); wg.Wait() }
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
