package engine

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/scripting"
	"github.com/jsinformer/jsinformer/status"
)

// stats are the engine's Prometheus metrics. A nil Registerer in Config keeps them private.
type stats struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	loads    *prometheus.CounterVec
	loadTime *prometheus.HistogramVec
	versions prometheus.Gauge
	// coalesced: by script, updates folded into a queued update of the same object (coalesce.go).
	coalesced *prometheus.CounterVec
	leader    prometheus.Gauge
	backlog   *backlog
	counts    status.Counts // the state API's handler counters

	memory      *prometheus.GaugeVec   // by script: its runtimes' latest measurement
	memoryStops *prometheus.CounterVec // by script
	// memoryDropped: by script, the events and reconcile keys a memory-guard stop skipped.
	memoryDropped *prometheus.CounterVec
	stopped       *prometheus.GaugeVec // by script: 1 while stopped by the memory guard
}

func newStats(reg prometheus.Registerer) *stats {
	s := &stats{
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
		reg.MustRegister(s.calls, s.duration, s.loads, s.loadTime, s.versions, s.coalesced, s.leader, s.backlog,
			s.memory, s.memoryStops, s.memoryDropped, s.stopped)
	}
	return s
}

// forget deletes every series of script, once its file is gone: a runner that sees many
// scripts come and go keeps no stale series. Versions still draining count into series
// resolved before (handlerMetrics), which are no longer exported.
func (s *stats) forget(script string) {
	labels := prometheus.Labels{"script": script}
	s.calls.DeletePartialMatch(labels)
	s.duration.DeletePartialMatch(labels)
	s.loads.DeletePartialMatch(labels)
	s.loadTime.DeletePartialMatch(labels)
	s.memory.DeletePartialMatch(labels)
	s.memoryStops.DeletePartialMatch(labels)
	s.memoryDropped.DeletePartialMatch(labels)
	s.coalesced.DeletePartialMatch(labels)
	s.stopped.DeletePartialMatch(labels)
}

// handlerMetrics are one handler's series, resolved once: a label lookup per call would cost
// more than a small handler itself.
type handlerMetrics struct {
	ok, failed, timedOut, stuck prometheus.Counter
	duration                    prometheus.Observer
	counts                      *status.CallCounts
}

// handler resolves the series of one handler of one script. Creating them also makes them
// appear at zero, as Prometheus advises for counters.
func (s *stats) handler(script, handler string) *handlerMetrics {
	return &handlerMetrics{
		ok:       s.calls.WithLabelValues(script, handler, "ok"),
		failed:   s.calls.WithLabelValues(script, handler, "error"),
		timedOut: s.calls.WithLabelValues(script, handler, "timeout"),
		stuck:    s.calls.WithLabelValues(script, handler, "stuck"),
		duration: s.duration.WithLabelValues(script, handler),
		counts:   s.counts.Get(script, handler),
	}
}

func (m *handlerMetrics) observe(d time.Duration, err error) {
	m.counts.Calls.Add(1)
	if err != nil {
		m.counts.Errors.Add(1)
	}
	switch {
	case err == nil:
		m.ok.Inc()
	case errors.Is(err, scripting.ErrTimeout):
		m.timedOut.Inc()
		m.counts.Timeouts.Add(1)
	case errors.Is(err, scripting.ErrStuck):
		m.stuck.Inc()
		m.counts.Stuck.Add(1)
	default:
		m.failed.Inc()
	}
	m.duration.Observe(d.Seconds())
}
