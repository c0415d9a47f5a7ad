package engine

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/scripting"
)

// versionMetrics are the metric families of one script version: the ones its collects
// compute at scrape time, and the live ones its handlers update. Created by the loader with
// the version; read by scrapes on their own goroutines; collects run on the version's worker.
type versionMetrics struct {
	script    string
	v         *version
	parent    *scriptMetrics
	collected []*collectedFamily
	live      map[string]*liveFamily // by name; scripting.Metrics for ctx.metrics
}

// names are the version's family names.
func (vm *versionMetrics) names() []string {
	var out []string
	for _, f := range vm.collected {
		out = append(out, f.spec.Name)
	}
	for name := range vm.live {
		out = append(out, name)
	}
	return out
}

// collectedFamily is a family with collect.
type collectedFamily struct {
	spec      scripting.MetricSpec
	desc      *prometheus.Desc
	valueType prometheus.ValueType

	mu      sync.Mutex // concurrent scrapes
	lastErr string     // the failure last logged, so a family failing every scrape logs once
}

// collectRequest asks a version's worker for its collected families' samples.
type collectRequest struct {
	abandoned chan struct{}        // closed when the scrape stopped waiting
	reply     chan []collectResult // capacity 1: the worker never blocks on it
}

type collectResult struct {
	samples []scripting.MetricSample
	err     error
	skipped bool // not collected: the runner does not lead
}

// collect sends the version's series to ch. It reports false, sending nothing, when the
// version takes no more events (retired): the caller then asks its successor.
func (vm *versionMetrics) collect(ch chan<- prometheus.Metric) bool {
	if len(vm.collected) > 0 {
		req := &collectRequest{abandoned: make(chan struct{}), reply: make(chan []collectResult, 1)}
		if !vm.v.queue.push(event{kind: eventCollect, collect: req}) {
			return false
		}
		vm.send(ch, vm.await(req))
	}
	for _, f := range vm.live {
		f.collect(ch, vm)
	}
	return true
}

// await waits for the worker's answer: as long as the running call may take, then every
// family's call; nil when it did not come in time.
func (vm *versionMetrics) await(req *collectRequest) []collectResult {
	perCall := vm.parent.timeout + scripting.DefaultGrace
	wait := perCall * time.Duration(1+len(vm.collected))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case results := <-req.reply:
		return results
	case <-timer.C:
		close(req.abandoned)
		return nil
	}
}

// send turns results into metrics; a family that failed is counted and left out.
func (vm *versionMetrics) send(ch chan<- prometheus.Metric, results []collectResult) {
	for i, f := range vm.collected {
		if results == nil {
			vm.failed(f, metricErrBusy, "the script's worker did not get to the collect in time; it is busy with events or a long call")
			continue
		}
		r := results[i]
		switch {
		case r.skipped:
			continue
		case r.err != nil:
			vm.failed(f, metricErrorReason(r.err), r.err.Error())
			continue
		}
		metrics, err := f.metrics(r.samples)
		if err != nil {
			vm.failed(f, metricErrThrew, err.Error())
			continue
		}
		vm.succeeded(f)
		for _, m := range metrics {
			ch <- m
		}
	}
}

// metrics builds the family's series, all or none.
func (f *collectedFamily) metrics(samples []scripting.MetricSample) ([]prometheus.Metric, error) {
	out := make([]prometheus.Metric, len(samples))
	for i, s := range samples {
		m, err := prometheus.NewConstMetric(f.desc, f.valueType, s.Value, s.Labels...)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

func (vm *versionMetrics) failed(f *collectedFamily, reason, msg string) {
	vm.parent.errors.WithLabelValues(vm.script, f.spec.Name, reason).Inc()
	f.mu.Lock()
	again := f.lastErr == msg
	f.lastErr = msg
	f.mu.Unlock()
	if !again {
		vm.v.logger.Warn("metric left out of the scrape", "metric", f.spec.Name, "reason", reason, "error", msg)
	}
}

func (vm *versionMetrics) succeeded(f *collectedFamily) {
	f.mu.Lock()
	failing := f.lastErr != ""
	f.lastErr = ""
	f.mu.Unlock()
	if failing {
		vm.v.logger.Info("metric collected again", "metric", f.spec.Name)
	}
}

// collectMetrics runs the collects of req on the worker, between two events, so ctx.cache
// is the state the script has handled. ctx.resource is the first watched resource.
func (v *version) collectMetrics(req *collectRequest) {
	vm := v.scriptMetrics
	results := make([]collectResult, len(vm.collected))
	first := v.scheduleCache
	ev := scripting.Event{Cache: first}
	if first != nil {
		ev.Resource = first.Resource
	}
	for i, f := range vm.collected {
		select {
		case <-req.abandoned:
			return
		default:
		}
		if v.standby || !v.lead.valid() {
			results[i].skipped = true // standbys call nothing; the leader serves the series
			continue
		}
		start := time.Now()
		results[i].samples, results[i].err = v.script.Collect(f.spec.Name, ev, vm.parent.limit)
		v.metrics[eventCollect].observe(time.Since(start), results[i].err)
	}
	req.reply <- results
}

// metricSink is ctx.metrics's Go side for v's calls: nil (an interface nil) without families.
func (v *version) metricSink() scripting.Metrics {
	if v.scriptMetrics == nil || len(v.scriptMetrics.live) == 0 {
		return nil
	}
	return v.scriptMetrics
}
