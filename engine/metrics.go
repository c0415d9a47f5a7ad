package engine

import (
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/scripting"
)

// Metrics from scripts: package engine/internal/enginemetrics serves the families a
// definition declares; the engine hands it each version (enginemetrics.Worker) and runs the
// collects on the version's worker.

var _ enginemetrics.Worker = (*version)(nil)

// collectRequest is an eventCollect's scrape, waiting for the worker's answer.
type collectRequest = enginemetrics.CollectRequest

// QueueCollect queues a scrape's collects on v's worker; false once v takes no more events.
func (v *version) QueueCollect(req *collectRequest) bool {
	return v.queue.Push(event{Kind: eventCollect, Collect: req})
}

// collectMetrics runs the collects of req on the worker, between two events, so ctx.cache
// is the state the script has handled. ctx.resource is the first watched resource.
func (v *version) collectMetrics(req *collectRequest) {
	first := v.scheduleCache
	ev := scripting.Event{Cache: first}
	if first != nil {
		ev.Resource = first.Resource
	}
	req.Serve(func(family string, limit int) ([]scripting.MetricSample, bool, error) {
		if v.standby || !v.lead.Valid() {
			return nil, true, nil // standbys call nothing; the leader serves the series
		}
		start := time.Now()
		samples, err := v.script.Collect(family, ev, limit)
		v.metrics[eventCollect].Observe(time.Since(start), err)
		return samples, false, err
	})
}

// metricSink is ctx.metrics's Go side for v's calls: nil (an interface nil) without families.
func (v *version) metricSink() scripting.Metrics { return v.scriptMetrics.Sink() }

// checkMetricNames refuses a definition that declares a family another script serves or is
// loading, as a definition error at the family's line. Runs on the loader.
func (e *Engine) checkMetricNames(name string, def scripting.Definition) error {
	return enginemetrics.CheckNames(name, def.Metrics, func(yield func(string, []scripting.MetricSpec) bool) {
		for other, p := range e.plugins {
			for _, v := range []*version{p.current, p.pending} {
				if other != name && v != nil && !yield(other, v.def.Metrics) {
					return
				}
			}
		}
	})
}

// GatherScriptMetrics gathers the scripts' metric families as a scrape of the runner's
// /metrics would serve them (collects run on the versions' workers): sorted by name, each
// family's series by label values. Only the script families, none of the runner's own; for a
// driver such as `runner test`'s h.metrics(). Safe from any goroutine.
func (e *Engine) GatherScriptMetrics() ([]*dto.MetricFamily, error) { return e.scriptMetrics.Gather() }
