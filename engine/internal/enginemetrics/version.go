package enginemetrics

import (
	"fmt"
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
	retired   bool                   // replaced or withdrawn: counts no failure; under parent.mu
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

// CollectRequest asks a version's worker for its collected families' samples. The worker
// answers family by family (Serve), so a scrape that stops waiting at its deadline still
// serves the families answered by then.
type CollectRequest struct {
	vm   *Version
	done chan struct{} // closed by the worker once every family is answered

	mu        sync.Mutex
	started   bool            // the worker got to the request
	answered  []collectResult // in vm.collected's order; only the worker appends
	abandoned bool            // the scrape stopped waiting: the worker calls nothing more
}

type collectResult struct {
	samples []scripting.MetricSample
	err     error
	skipped bool // not collected: the runner does not lead, or another replica serves it
}

// collect sends the version's series to ch, waiting for its collects until deadline. It
// reports false, sending nothing, when the version takes no more events (retired): the caller
// then asks its successor.
func (vm *Version) collect(ch chan<- prometheus.Metric, deadline time.Time) bool {
	if len(vm.collected) > 0 {
		req := &CollectRequest{vm: vm, done: make(chan struct{})}
		if !vm.worker.QueueCollect(req) {
			return false
		}
		started, answered := req.await(deadline)
		vm.send(ch, started, answered)
	}
	for _, f := range vm.live {
		f.collect(ch, vm)
	}
	return true
}

// await waits for the worker's answers until deadline, then abandons req: it returns whether
// the worker got to req and the families it answered by then, a prefix of vm.collected.
func (req *CollectRequest) await(deadline time.Time) (started bool, answered []collectResult) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-req.done:
	case <-timer.C:
	}
	req.mu.Lock()
	defer req.mu.Unlock()
	req.abandoned = true
	return req.started, req.answered
}

// send turns the answers into metrics; a family that failed or was not answered in time is
// counted and left out.
func (vm *Version) send(ch chan<- prometheus.Metric, started bool, answered []collectResult) {
	for i, f := range vm.collected {
		if i >= len(answered) {
			vm.unanswered(f, started)
			continue
		}
		r := answered[i]
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

// unanswered counts a family whose answer did not come before the scrape's deadline: busy
// when the worker never got to the request, timeout when its collect was too slow.
func (vm *Version) unanswered(f *collectedFamily, started bool) {
	limit := vm.parent.deadline
	if !started {
		vm.failed(f, metricErrBusy, fmt.Sprintf("the script's worker did not get to the collect within %v (--metric-collect-timeout): it is busy with events or a long call, or paused", limit))
		return
	}
	vm.failed(f, metricErrTimeout, fmt.Sprintf("the collect did not finish within the scrape's %v (--metric-collect-timeout)", limit))
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
	vm.parent.count(vm, f.spec.Name, reason)
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
// events, so each sees the state the script has handled, handing each family's answer to the
// scrape as it comes. It stops once the scrape stopped waiting. call computes one family,
// with at most limit series; skipped: left out of this scrape (a standby calls nothing; the
// leader, or the replica owning the family, serves it).
func (req *CollectRequest) Serve(call func(family string, limit int) (samples []scripting.MetricSample, skipped bool, err error)) {
	vm := req.vm
	if !req.answer(nil) {
		return
	}
	for _, f := range vm.collected {
		var r collectResult
		r.samples, r.skipped, r.err = call(f.spec.Name, vm.parent.limit)
		if !req.answer(&r) {
			return
		}
	}
	close(req.done)
}

// answer records the worker's start (r nil) or the next family's answer; false once the
// scrape stopped waiting, when the worker calls nothing more.
func (req *CollectRequest) answer(r *collectResult) bool {
	req.mu.Lock()
	defer req.mu.Unlock()
	if req.abandoned {
		return false
	}
	if r == nil {
		req.started = true
	} else {
		req.answered = append(req.answered, *r)
	}
	return true
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
