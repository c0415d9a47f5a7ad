package engine

import (
	dto "github.com/prometheus/client_model/go"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/scripting"
)

// Metrics from scripts: package engine/internal/enginemetrics serves the families a
// definition declares; each version registers its own (package engine/internal/version, an
// enginemetrics.Worker that runs the collects on its worker). The loader checks the names
// across scripts and swaps which version's families a scrape sees.

// checkMetricNames refuses a definition that declares a family another script serves or is
// loading, as a definition error at the family's line. Runs on the loader.
func (e *Engine) checkMetricNames(name string, def scripting.Definition) error {
	return enginemetrics.CheckNames(name, def.Metrics, func(yield func(string, []scripting.MetricSpec) bool) {
		for other, p := range e.plugins {
			for _, v := range []*loaded{p.current, p.pending} {
				if other != name && v != nil && !yield(other, v.ver.Definition().Metrics) {
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
