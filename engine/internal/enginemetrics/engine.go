package enginemetrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// Engine is the engine's own series: handler calls, loads, versions and their backlog,
// leadership and the memory guard's verdicts. The engine tells it what happened (a load, a
// stop, a version added or ended); it decides the series. A nil Registerer keeps them private.
type Engine struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	loads    *prometheus.CounterVec
	loadTime *prometheus.HistogramVec
	versions prometheus.Gauge
	// coalesced: by script, updates folded into a queued update of the same object.
	coalesced *prometheus.CounterVec
	leader    prometheus.Gauge
	backlog   *backlog

	memory      *prometheus.GaugeVec   // by script: its runtimes' latest measurement
	memoryStops *prometheus.CounterVec // by script
	// memoryDropped: by script, the events and reconcile keys a memory-guard stop skipped.
	memoryDropped *prometheus.CounterVec
	stopped       *prometheus.GaugeVec // by script: 1 while stopped by the memory guard
	// keysDropped: by script, reconcile keys given up on after maxRetries failures.
	keysDropped *prometheus.CounterVec
}

// NewEngine makes the engine's series and registers them on reg, if not nil.
func NewEngine(reg prometheus.Registerer) *Engine {
	m := &Engine{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_handler_calls_total",
			Help: "Calls of the handlers a script defines, by script, handler and result (ok, error, timeout, stuck: a call that did not stop after its timeout, whose runtime was abandoned).",
		}, []string{"script", "handler", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "jsinformer_handler_duration_seconds",
			Help:    "Script handler call duration.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 4, 10),
		}, []string{"script", "handler"}),
		loads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_script_loads_total",
			Help: "Script loads by result (loaded, reloaded, failed, stopped: by the memory guard). A script's series are deleted when its file is removed.",
		}, []string{"script", "result"}),
		loadTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "jsinformer_script_load_duration_seconds",
			Help: "From compiling a script's new content until that version serves: compile, replay of the cached objects to it, swap. Excludes the debounce.",
			// 10 ms to 40 s: a small cache reloads in milliseconds, 20,000 objects in a few hundred.
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 13),
		}, []string{"script", "result"}),
		coalesced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_events_coalesced_total",
			Help: "Updates folded into a queued update of the same object because the script's backlog passed --max-backlog.",
		}, []string{"script"}),
		versions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "jsinformer_script_versions",
			Help: "Script versions alive, including ones syncing or draining.",
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "jsinformer_leader",
			Help: "1 while this runner leads (always, without --leader-elect), 0 while it stands by.",
		}),
		backlog: newBacklog(),
		memory: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "jsinformer_script_memory_bytes",
			Help: "Memory a script's runtimes hold, as last measured by the memory guard (measured only while the heap is above half the memory limit).",
		}, []string{"script"}),
		memoryStops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_memory_guard_stops_total",
			Help: "Scripts stopped by the memory guard because their memory kept growing near the memory limit.",
		}, []string{"script"}),
		memoryDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_memory_guard_dropped_total",
			Help: "Events and reconcile keys queued for a script version the memory guard stopped, dropped unhandled.",
		}, []string{"script"}),
		keysDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jsinformer_reconcile_keys_dropped_total",
			Help: "Reconcile keys given up on after maxRetries failed runs in a row (runner queue lists the last ones with their error).",
		}, []string{"script"}),
		stopped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "jsinformer_script_stopped",
			Help: "1 while the memory guard keeps a script stopped: until its file changes.",
		}, []string{"script"}),
	}
	runtimes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "jsinformer_script_runtimes",
		Help: "Script runtimes (goja) alive in the process: each version's worker, index stage and reconcile workers, and abandoned runtimes still stuck in a call.",
	}, func() float64 { return float64(scripting.LiveRuntimes()) })
	if reg != nil {
		reg.MustRegister(runtimes)
		reg.MustRegister(m.calls, m.duration, m.loads, m.loadTime, m.versions, m.coalesced, m.leader, m.backlog,
			m.memory, m.memoryStops, m.memoryDropped, m.stopped, m.keysDropped)
	}
	return m
}

// Loaded counts a load of script that ended with result ("loaded", "reloaded") after took.
func (m *Engine) Loaded(script, result string, took time.Duration) {
	m.loads.WithLabelValues(script, result).Inc()
	m.loadTime.WithLabelValues(script, result).Observe(took.Seconds())
}

// LoadFailed counts a failed load of script (a failure reported, not one held until its
// content settles, nor a retry failing the same way).
func (m *Engine) LoadFailed(script string) { m.loads.WithLabelValues(script, "failed").Inc() }

// MemoryStopped counts the memory guard's stop of script, with the events and reconcile keys
// it dropped; the script shows as stopped until StopLifted.
func (m *Engine) MemoryStopped(script string, dropped int) {
	m.memoryStops.WithLabelValues(script).Inc()
	m.memoryDropped.WithLabelValues(script).Add(float64(dropped))
	m.loads.WithLabelValues(script, "stopped").Inc()
	m.stopped.WithLabelValues(script).Set(1)
	m.memory.DeleteLabelValues(script)
}

// StopLifted says script is no longer stopped by the memory guard (its file changed).
func (m *Engine) StopLifted(script string) { m.stopped.DeleteLabelValues(script) }

// MemoryMeasured is script's runtimes' latest measurement by the memory guard.
func (m *Engine) MemoryMeasured(script string, bytes int64) {
	m.memory.WithLabelValues(script).Set(float64(bytes))
}

// Leading is whether this runner leads (always, without leader election).
func (m *Engine) Leading(leading bool) {
	if leading {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}

// Coalesced is script's count of updates folded into a queued one.
func (m *Engine) Coalesced(script string) prometheus.Counter {
	return m.coalesced.WithLabelValues(script)
}

// VersionAdded counts a version alive and shows its backlog until VersionEnded.
func (m *Engine) VersionAdded(v Backlogged) {
	m.versions.Inc()
	m.backlog.add(v)
}

// VersionEnded is told once v's goroutines have ended.
func (m *Engine) VersionEnded(v Backlogged) {
	m.versions.Dec()
	m.backlog.remove(v)
}

// Forget deletes every series of script, once its file is gone: a runner that sees many
// scripts come and go keeps no stale series. Versions still draining count into series
// resolved before (Handler), which are no longer exported.
func (m *Engine) Forget(script string) {
	labels := prometheus.Labels{"script": script}
	m.calls.DeletePartialMatch(labels)
	m.duration.DeletePartialMatch(labels)
	m.loads.DeletePartialMatch(labels)
	m.loadTime.DeletePartialMatch(labels)
	m.memory.DeletePartialMatch(labels)
	m.memoryStops.DeletePartialMatch(labels)
	m.memoryDropped.DeletePartialMatch(labels)
	m.coalesced.DeletePartialMatch(labels)
	m.stopped.DeletePartialMatch(labels)
	m.keysDropped.DeletePartialMatch(labels)
}

// Handler is one handler's series, resolved once: a label lookup per call would cost more
// than a small handler itself. Observe is called by the handler's caller (a version's worker
// or a reconcile worker).
type Handler struct {
	ok, failed, timedOut, stuck prometheus.Counter
	duration                    prometheus.Observer
	counts                      *status.CallCounts
	dropped                     prometheus.Counter // reconcile only
}

// Handler resolves the series of one handler of one script, which also counts into counts
// (the state API's). Creating them also makes them appear at zero, as Prometheus advises for
// counters.
func (m *Engine) Handler(script, handler string, counts *status.CallCounts) *Handler {
	h := &Handler{
		ok:       m.calls.WithLabelValues(script, handler, "ok"),
		failed:   m.calls.WithLabelValues(script, handler, "error"),
		timedOut: m.calls.WithLabelValues(script, handler, "timeout"),
		stuck:    m.calls.WithLabelValues(script, handler, "stuck"),
		duration: m.duration.WithLabelValues(script, handler),
		counts:   counts,
	}
	if handler == "reconcile" { // only a reconciler drops keys: no zero series for the others
		h.dropped = m.keysDropped.WithLabelValues(script)
	}
	return h
}

// Dropped counts a reconcile key given up on after maxRetries failures (the reconcile
// handler's series; a no-op for the others).
func (h *Handler) Dropped() {
	if h.dropped != nil {
		h.dropped.Inc()
	}
}

// Observe counts one call that took d and ended with err.
func (h *Handler) Observe(d time.Duration, err error) {
	h.counts.Calls.Add(1)
	if err != nil {
		h.counts.Errors.Add(1)
	}
	switch {
	case err == nil:
		h.ok.Inc()
	case errors.Is(err, scripting.ErrTimeout):
		h.timedOut.Inc()
		h.counts.Timeouts.Add(1)
	case errors.Is(err, scripting.ErrStuck):
		h.stuck.Inc()
		h.counts.Stuck.Add(1)
	default:
		h.failed.Inc()
	}
	h.duration.Observe(d.Seconds())
}
