package engine

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/engine/internal/enginemetrics"
	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// stats are the engine's own series (package engine/internal/enginemetrics, registered on
// Config.Registerer when set) and the state API's handler counters, which every handler call
// counts into with them.
type stats struct {
	*enginemetrics.Engine
	fetch  *enginemetrics.Fetch
	counts status.Counts
}

func newStats(reg prometheus.Registerer) *stats {
	return &stats{Engine: enginemetrics.NewEngine(reg), fetch: enginemetrics.NewFetch(reg)}
}

// fetchObserver counts the fetch requests of script's versions (scripting.Options.OnRequest).
func (s *stats) fetchObserver(script string) func(scripting.RequestRecord) {
	return func(r scripting.RequestRecord) { s.fetch.Observe(script, r) }
}

// handlerMetrics are one handler's series and state counters, resolved once.
type handlerMetrics = enginemetrics.Handler

// handler resolves the series and counters of one handler of one script.
func (s *stats) handler(script, handler string) *handlerMetrics {
	return s.Handler(script, handler, s.counts.Get(script, handler))
}
