package enginemetrics

import (
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/jsinformer/jsinformer/scripting"
)

// Scripts is the one prometheus.Collector, registered once, through which every script's
// families (those a definition's `metrics` declares) are served on /metrics: it maps each
// script to the Version of its serving version. The engine's loader swaps an entry at the
// version switch (Serve) and removes it when that version is retired without a successor
// (Withdraw): one map write under mu, so a scrape sees, per script, either the old version's
// families or the new one's, never half of each and never both. Registering a
// prometheus.Collector per version with the registry instead would not be atomic: Unregister
// and Register are two steps, and a Gather between them that saw both would fail the whole
// scrape on the duplicate series.
//
// A family with collect is computed at scrape time by its collect(ctx), on the version's own
// worker (a CollectRequest its Worker queues like the schedules' events), so ctx.cache is
// exactly what the script has been shown and deleted objects leave no stale series. Each call
// has the handler timeout; a family that throws, times out, or returns more than the series
// limit is left out of that scrape and counted in jsinformer_script_metric_errors_total, and
// the other families are served. Families without collect live in Go (live.go), updated by
// handlers through ctx.metrics.
type Scripts struct {
	limit   int           // series per family
	timeout time.Duration // the handler timeout: each collect call's
	errors  *prometheus.CounterVec

	mu       sync.RWMutex
	versions map[string]*Version // by script: its serving version's families
}

// Metric error reasons, the reason label of jsinformer_script_metric_errors_total.
const (
	metricErrThrew   = "error"   // collect threw or returned something invalid
	metricErrTimeout = "timeout" // collect ran past the handler timeout (or got stuck)
	metricErrLimit   = "limit"   // more series than --metric-series-limit
	metricErrBusy    = "busy"    // the worker did not get to the collect in time
)

// NewScripts serves at most limit series per family and gives each collect call timeout
// (the handler timeout).
func NewScripts(limit int, timeout time.Duration) *Scripts {
	return &Scripts{limit: limit, timeout: timeout, versions: map[string]*Version{},
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_script_metric_errors_total",
			Help: "Script metric families left out of a scrape or refused an update, by script, metric and reason " +
				"(error: collect threw or returned an invalid sample; timeout: past the handler timeout; limit: more series than --metric-series-limit; busy: the script's worker did not get to the collect in time).",
		}, []string{"script", "metric", "reason"}),
	}
}

// Describe describes nothing: the families come and go with scripts, so the collector is
// unchecked; the engine checks names when a script loads (CheckNames).
func (m *Scripts) Describe(chan<- *prometheus.Desc) {}

// Collect serves the families of every script's serving version, each script's collects
// running concurrently on their own workers.
func (m *Scripts) Collect(ch chan<- prometheus.Metric) {
	m.mu.RLock()
	serving := slices.Collect(maps.Values(m.versions))
	m.mu.RUnlock()
	var wg sync.WaitGroup
	for _, vm := range serving {
		wg.Go(func() { m.collectScript(vm, ch) })
	}
	wg.Wait()
}

// collectScript serves one script; when the version it read has stopped taking events (it
// was retired after Collect read the map), it serves the version that replaced it.
func (m *Scripts) collectScript(vm *Version, ch chan<- prometheus.Metric) {
	if vm.collect(ch) {
		return
	}
	m.mu.RLock()
	now := m.versions[vm.script]
	m.mu.RUnlock()
	if now != nil && now != vm {
		now.collect(ch)
	}
}

// Gather is a scrape of the scripts' families alone, as the runner's /metrics serves them
// (the collects run on the versions' workers): sorted by name, each family's series by label
// values. Safe from any goroutine.
func (m *Scripts) Gather() ([]*dto.MetricFamily, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		return nil, fmt.Errorf("register script metrics: %w", err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather script metrics: %w", err)
	}
	return mfs, nil
}

// Errors is jsinformer_script_metric_errors_total, to register beside m.
func (m *Scripts) Errors() prometheus.Collector { return m.errors }

// NewVersion makes the families specs declares for one version of script, whose collects w
// runs and whose failures logger reports; nil when specs is empty.
func (m *Scripts) NewVersion(script string, specs []scripting.MetricSpec, w Worker, logger *slog.Logger) *Version {
	if len(specs) == 0 {
		return nil
	}
	vm := &Version{script: script, worker: w, logger: logger, parent: m, live: map[string]*liveFamily{}}
	for _, spec := range specs {
		desc := prometheus.NewDesc(spec.Name, spec.Help, spec.Labels, nil)
		if spec.Collect {
			vm.collected = append(vm.collected, &collectedFamily{spec: spec, desc: desc, valueType: valueType(spec.Type)})
			continue
		}
		vm.live[spec.Name] = newLiveFamily(spec, desc, m.limit)
	}
	return vm
}

// Serve makes vm the families served for script (nil: none); called by the loader at the
// switch.
// The error counters of the families vm declares appear at zero (so that increase() sees
// their first failure); those of families it no longer declares go.
func (m *Scripts) Serve(vm *Version, script string) {
	m.mu.Lock()
	prev := m.versions[script]
	if vm == nil {
		delete(m.versions, script) // the new version declares none
	} else {
		m.versions[script] = vm
	}
	m.mu.Unlock()
	declared := map[string]bool{}
	if vm != nil {
		for _, f := range vm.collected {
			declared[f.spec.Name] = true
			for _, reason := range []string{metricErrThrew, metricErrTimeout, metricErrLimit, metricErrBusy} {
				m.errors.WithLabelValues(script, f.spec.Name, reason)
			}
		}
		for name := range vm.live {
			declared[name] = true
			m.errors.WithLabelValues(script, name, metricErrLimit)
		}
	}
	if prev != nil {
		for _, name := range prev.names() {
			if !declared[name] {
				m.errors.DeletePartialMatch(prometheus.Labels{"script": script, "metric": name})
			}
		}
	}
}

// Withdraw stops serving vm if it is still served: its version was retired with no successor
// (unload, the memory guard, shutdown). A retired version a successor replaced is no longer
// served already.
func (m *Scripts) Withdraw(vm *Version) {
	if vm == nil {
		return
	}
	m.mu.Lock()
	served := m.versions[vm.script] == vm
	if served {
		delete(m.versions, vm.script)
	}
	m.mu.Unlock()
	if served {
		m.errors.DeletePartialMatch(prometheus.Labels{"script": vm.script})
	}
}

func valueType(t scripting.MetricType) prometheus.ValueType {
	if t == scripting.Counter {
		return prometheus.CounterValue
	}
	return prometheus.GaugeValue
}

// metricErrorReason is the reason label for a failed collect.
func metricErrorReason(err error) string {
	switch {
	case errors.Is(err, scripting.ErrSeriesLimit):
		return metricErrLimit
	case errors.Is(err, scripting.ErrTimeout), errors.Is(err, scripting.ErrStuck):
		return metricErrTimeout
	}
	return metricErrThrew
}

// CheckNames refuses specs, the families script declares, when one would expose a series
// that another script declares (others: each other script's loaded or loading families), as
// a definition error at the family's line: metric names are shared by every script.
func CheckNames(script string, specs []scripting.MetricSpec, others iter.Seq2[string, []scripting.MetricSpec]) error {
	if len(specs) == 0 {
		return nil
	}
	taken := map[string]string{} // exposed series name → script
	for other, declared := range others {
		for _, spec := range declared {
			for _, n := range spec.ExposedNames() {
				taken[n] = other
			}
		}
	}
	for _, spec := range specs {
		for _, n := range spec.ExposedNames() {
			if other, ok := taken[n]; ok {
				return &scripting.ScriptError{File: script, Line: spec.Line, Err: scripting.ErrInvalidDefinition, Message: fmt.Sprintf(
					"metric '%s' would expose the series %s, which %s already declares; metric names are shared by every script", spec.Name, n, other)}
			}
		}
	}
	return nil
}
