package enginemetrics

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jsinformer/jsinformer/scripting"
)

// liveFamily is a family without collect: its series live here, updated by the version's
// handlers, reconcile workers and schedules through ctx.metrics (any of their goroutines) and
// read by scrapes. A new version starts its families from zero: Prometheus's rate() and
// increase() read the drop of a counter at a reload as a counter reset.
type liveFamily struct {
	spec    scripting.MetricSpec
	desc    *prometheus.Desc
	limit   int
	buckets []float64 // a histogram's upper bounds

	mu     sync.Mutex
	series map[string]*liveSeries // by label values joined with 0xff
}

type liveSeries struct {
	labels []string
	value  float64  // counter, gauge
	count  uint64   // histogram
	sum    float64  // histogram
	counts []uint64 // histogram: observations per bucket, not cumulative
}

func newLiveFamily(spec scripting.MetricSpec, desc *prometheus.Desc, limit int) *liveFamily {
	f := &liveFamily{spec: spec, desc: desc, limit: limit, series: map[string]*liveSeries{}}
	if spec.Type == scripting.Histogram {
		f.buckets = spec.Buckets
		if f.buckets == nil {
			f.buckets = prometheus.DefBuckets
		}
	}
	return f
}

// Add implements scripting.Metrics for counters and gauges.
func (vm *Version) Add(family string, labels []string, n float64) error {
	return vm.update(family, labels, func(s *liveSeries) { s.value += n })
}

// Set implements scripting.Metrics for gauges.
func (vm *Version) Set(family string, labels []string, value float64) error {
	return vm.update(family, labels, func(s *liveSeries) { s.value = value })
}

// Observe implements scripting.Metrics for histograms.
func (vm *Version) Observe(family string, labels []string, value float64) error {
	f := vm.live[family]
	if f == nil {
		return fmt.Errorf("observe %s: no such family", family)
	}
	i, _ := slices.BinarySearch(f.buckets, value) // the first bound ≥ value; len: +Inf only
	return vm.update(family, labels, func(s *liveSeries) {
		s.count++
		s.sum += value
		if i < len(s.counts) {
			s.counts[i]++
		}
	})
}

func (vm *Version) update(family string, labels []string, op func(*liveSeries)) error {
	f := vm.live[family]
	if f == nil { // scripting only hands out handles of live families
		return fmt.Errorf("update %s: no such family", family)
	}
	key := seriesKey(labels)
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.series[key]
	if s == nil {
		if len(f.series) >= f.limit {
			vm.parent.count(vm, family, metricErrLimit)
			return fmt.Errorf("%s already has %d series, the limit per family (--metric-series-limit); "+
				"label values should come from a small set: %w", family, f.limit, scripting.ErrSeriesLimit)
		}
		s = &liveSeries{labels: labels}
		if f.buckets != nil {
			s.counts = make([]uint64, len(f.buckets))
		}
		f.series[key] = s
	}
	op(s)
	return nil
}

// collect sends the family's series; one that Prometheus refuses (a label value that is not
// valid UTF-8) is left out and counted.
func (f *liveFamily) collect(ch chan<- prometheus.Metric, vm *Version) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.series {
		var m prometheus.Metric
		var err error
		switch f.spec.Type {
		case scripting.Histogram:
			m, err = prometheus.NewConstHistogram(f.desc, s.count, s.sum, cumulative(f.buckets, s.counts), s.labels...)
		default:
			m, err = prometheus.NewConstMetric(f.desc, valueType(f.spec.Type), s.value, s.labels...)
		}
		if err != nil {
			vm.parent.count(vm, f.spec.Name, metricErrThrew)
			continue
		}
		ch <- m
	}
}

func cumulative(bounds []float64, counts []uint64) map[float64]uint64 {
	out := make(map[float64]uint64, len(bounds))
	var total uint64
	for i, b := range bounds {
		total += counts[i]
		out[b] = total
	}
	return out
}

// seriesKey joins label values with a byte no valid UTF-8 string holds.
func seriesKey(labels []string) string {
	return strings.Join(labels, "\xff")
}
