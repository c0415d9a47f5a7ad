package enginemetrics

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/scripting"
)

// Worker runs one version's collects: an engine/internal/version Version, whose worker
// goroutine owns the Script.
type Worker interface {
	// QueueCollect queues req for the worker, which answers it with req.Serve between two
	// events; false when the version takes no more events (retired). It never blocks.
	QueueCollect(req *CollectRequest) bool
}

// Version is the metric families of one script version: the ones its collects compute at
// scrape time, and the live ones its handlers update (scripting.Metrics, ctx.metrics).
// Created by the loader with the version; read by scrapes on their own goroutines; collects
// run on the version's worker.
type Version struct {
	script    string
	worker    Worker
	logger    *slog.Logger // the version's
	parent    *Scripts
	collected []*collectedFamily
	live      map[string]*liveFamily // by name; scripting.Metrics for ctx.metrics
}

// names are the version's family names.
func (vm *Version) names() []string {
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

// CollectRequest asks a version's worker for its collected families' samples.
type CollectRequest struct {
	vm        *Version
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
func (vm *Version) collect(ch chan<- prometheus.Metric) bool {
	if len(vm.collected) > 0 {
		req := &CollectRequest{vm: vm, abandoned: make(chan struct{}), reply: make(chan []collectResult, 1)}
		if !vm.worker.QueueCollect(req) {
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
func (vm *Version) await(req *CollectRequest) []collectResult {
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
func (vm *Version) send(ch chan<- prometheus.Metric, results []collectResult) {
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

func (vm *Version) failed(f *collectedFamily, reason, msg string) {
	vm.parent.errors.WithLabelValues(vm.script, f.spec.Name, reason).Inc()
	f.mu.Lock()
	again := f.lastErr == msg
	f.lastErr = msg
	f.mu.Unlock()
	if !again {
		vm.logger.Warn("metric left out of the scrape", "metric", f.spec.Name, "reason", reason, "error", msg)
	}
}

func (vm *Version) succeeded(f *collectedFamily) {
	f.mu.Lock()
	failing := f.lastErr != ""
	f.lastErr = ""
	f.mu.Unlock()
	if failing {
		vm.logger.Info("metric collected again", "metric", f.spec.Name)
	}
}

// Serve runs the collects of req on the calling goroutine, the version's worker, between two
// events, so each sees the state the script has handled; then it answers the scrape. It stops
// early when the scrape stopped waiting. call computes one family, with at most limit series;
// skipped: left out of this scrape (a standby calls nothing; the leader serves the series).
func (req *CollectRequest) Serve(call func(family string, limit int) (samples []scripting.MetricSample, skipped bool, err error)) {
	vm := req.vm
	results := make([]collectResult, len(vm.collected))
	for i, f := range vm.collected {
		select {
		case <-req.abandoned:
			return
		default:
		}
		results[i].samples, results[i].skipped, results[i].err = call(f.spec.Name, vm.parent.limit)
	}
	req.reply <- results
}

// Sink is ctx.metrics's Go side for the version's calls: nil (an interface nil) when vm is
// nil or has no family without collect.
func (vm *Version) Sink() scripting.Metrics {
	if vm == nil || len(vm.live) == 0 {
		return nil
	}
	return vm
}

// Collected reports whether vm has families with collect, which its worker computes.
func (vm *Version) Collected() bool { return vm != nil && len(vm.collected) > 0 }
