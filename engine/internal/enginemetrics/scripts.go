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
// (Withdraw, told of every retired version): one map write under mu, so a scrape sees, per script, either the old version's
// families or the new one's, never half of each and never both. Registering a
// prometheus.Collector per version with the registry instead would not be atomic: Unregister
// and Register are two steps, and a Gather between them that saw both would fail the whole
// scrape on the duplicate series.
//
// A family with collect is computed at scrape time by its collect(ctx), on the version's own
// worker (a CollectRequest its Worker queues like the schedules' events), so ctx.cache is
// exactly what the script has been shown and deleted objects leave no stale series. Each call
// has the handler timeout, and a scrape waits for a script's collects until its deadline
// (DefaultCollectDeadline, well under Prometheus's default scrape timeout of 10s): a family
// that throws, times out, returns more than the series limit, or is not answered by the
// deadline (its worker busy or paused) is left out of that scrape and counted in
// jsinformer_script_metric_errors_total, and the other families, the other scripts' and the
// runner's own are served. Families without collect live in Go (live.go), updated by
// handlers through ctx.metrics.
type Scripts struct {
	limit    int           // series per family
	deadline time.Duration // how long a scrape waits for the collects
	errors   *prometheus.CounterVec

	// mu orders the switches (Serve, Withdraw) with the failures counted (count), so a
	// retired version never brings back an error series the switch deleted.
	mu       sync.RWMutex
	versions map[string]*Version // by script: its serving version's families
}

// Metric error reasons, the reason label of jsinformer_script_metric_errors_total.
const (
	metricErrThrew   = "error"   // collect threw or returned something invalid
	metricErrTimeout = "timeout" // collect ran past the handler timeout or the scrape's deadline
	metricErrLimit   = "limit"   // more series than --metric-series-limit
	metricErrBusy    = "busy"    // the worker did not get to the collect by the scrape's deadline
)

// DefaultCollectDeadline is how long a scrape waits for the scripts' collects when NewScripts
// is given none: well under Prometheus's default scrape timeout (10s), so that one busy or
// paused script never takes the whole target down, and long enough for a collect over a
// large cache.
const DefaultCollectDeadline = time.Second

// NewScripts serves at most limit series per family; a scrape waits for the collects at
// most deadline (zero: DefaultCollectDeadline).
func NewScripts(limit int, deadline time.Duration) *Scripts {
	if deadline <= 0 {
		deadline = DefaultCollectDeadline
	}
	return &Scripts{limit: limit, deadline: deadline, versions: map[string]*Version{},
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_script_metric_errors_total",
			Help: "Script metric families left out of a scrape or refused an update, by script, metric and reason " +
				"(error: collect threw or returned an invalid sample; timeout: past the handler timeout, or not finished by the scrape's --metric-collect-timeout; limit: more series than --metric-series-limit; busy: the script's worker, busy or paused, did not get to the collect by the scrape's --metric-collect-timeout).",
		}, []string{"script", "metric", "reason"}),
	}
}

// Describe describes nothing: the families come and go with scripts, so the collector is
// unchecked; the engine checks names when a script loads (CheckNames).
func (m *Scripts) Describe(chan<- *prometheus.Desc) {}

// Collect serves the families of every script's serving version, each script's collects
// running concurrently on their own workers, and returns by the deadline: what a worker has
// not answered by then is counted and left out.
func (m *Scripts) Collect(ch chan<- prometheus.Metric) {
	deadline := time.Now().Add(m.deadline)
	m.mu.RLock()
	serving := slices.Collect(maps.Values(m.versions))
	m.mu.RUnlock()
	var wg sync.WaitGroup
	for _, vm := range serving {
		wg.Go(func() { m.collectScript(vm, ch, deadline) })
	}
	wg.Wait()
}

// collectScript serves one script; when the version it read has stopped taking events (it
// was retired after Collect read the map), it serves the version that replaced it.
func (m *Scripts) collectScript(vm *Version, ch chan<- prometheus.Metric, deadline time.Time) {
	if vm.collect(ch, deadline) {
		return
	}
	m.mu.RLock()
	now := m.versions[vm.script]
	m.mu.RUnlock()
	if now != nil && now != vm {
		now.collect(ch, deadline)
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
// switch. The error counters of the families vm declares appear at zero (so that increase()
// sees their first failure); those of families it no longer declares go. The version it
// replaces counts no more failures: its series would outlive it.
func (m *Scripts) Serve(vm *Version, script string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.versions[script]
	if vm == nil {
		delete(m.versions, script) // the new version declares none
	} else {
		m.versions[script] = vm
	}
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
	if prev != nil && prev != vm {
		prev.retired = true
		m.forget(script, prev.names(), declared)
	}
}

// Withdraw stops serving vm, and its failures being counted: its version was retired
// (unload, a successor, the memory guard, shutdown), though it may still drain. Its error
// series go unless the version serving now declares the same families: a removed script
// leaves none behind, and none comes back.
func (m *Scripts) Withdraw(vm *Version) {
	if vm == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	vm.retired = true
	declared := map[string]bool{}
	if now := m.versions[vm.script]; now == vm {
		delete(m.versions, vm.script)
	} else if now != nil {
		for _, name := range now.names() {
			declared[name] = true
		}
	}
	m.forget(vm.script, vm.names(), declared)
}

// forget deletes the error series of script's families names but those declared; under mu.
func (m *Scripts) forget(script string, names []string, declared map[string]bool) {
	for _, name := range names {
		if !declared[name] {
			m.errors.DeletePartialMatch(prometheus.Labels{"script": script, "metric": name})
		}
	}
}

// count counts a failure of vm's family for reason, unless vm is retired: under mu, so a
// series Serve or Withdraw deleted is never created again.
func (m *Scripts) count(vm *Version, family, reason string) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !vm.retired {
		m.errors.WithLabelValues(vm.script, family, reason).Inc()
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
