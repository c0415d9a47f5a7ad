package jstest

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/dop251/goja"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// h.metrics(name?) and h.metricsText(): the plugin's metric families as a scrape of the
// runner's /metrics serves them, collects included (run on the plugin's worker, as at a
// scrape). A family whose collect fails is left out, as in a scrape; h.errors does not list
// it (the runner logs a warning and counts jsinformer_script_metric_errors_total).

// metrics returns the samples, in the text exposition's order: one {name, labels, value} per
// line, a histogram as its _bucket (with le), _sum and _count samples. With name, only that
// family's.
func (h *harness) metrics(name goja.Value) goja.Value {
	want := ""
	if !missing(name) {
		if _, ok := name.Export().(string); !ok {
			h.f.throw(fmt.Errorf("h.metrics(name): name must be a metric name, got %s", name.String()))
		}
		want = name.String()
	}
	mfs, err := h.scrape()
	h.check(err)
	rt := h.f.rt
	var out []any
	for _, mf := range mfs {
		if want != "" && mf.GetName() != want {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, s := range samplesOf(mf, m) {
				o := rt.NewObject()
				_ = o.Set("name", s.name)
				labels := rt.NewObject()
				for _, l := range s.labels {
					_ = labels.Set(l[0], l[1])
				}
				_ = o.Set("labels", labels)
				_ = o.Set("value", s.value)
				out = append(out, o)
			}
		}
	}
	return rt.NewArray(out...)
}

// metricsText is the text exposition format of the plugin's families.
func (h *harness) metricsText() goja.Value {
	mfs, err := h.scrape()
	h.check(err)
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			h.f.throw(fmt.Errorf("h.metricsText: %w", err))
		}
	}
	return h.f.rt.ToValue(b.String())
}

type flatSample struct {
	name   string
	labels [][2]string
	value  float64
}

// samplesOf flattens one series as the text exposition writes it.
func samplesOf(mf *dto.MetricFamily, m *dto.Metric) []flatSample {
	var labels [][2]string
	for _, l := range m.GetLabel() {
		labels = append(labels, [2]string{l.GetName(), l.GetValue()})
	}
	name := mf.GetName()
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		return []flatSample{{name, labels, m.GetCounter().GetValue()}}
	case dto.MetricType_HISTOGRAM:
		hist := m.GetHistogram()
		var out []flatSample
		for _, b := range hist.GetBucket() {
			le := append(append([][2]string(nil), labels...), [2]string{"le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)})
			out = append(out, flatSample{name + "_bucket", le, float64(b.GetCumulativeCount())})
		}
		inf := append(append([][2]string(nil), labels...), [2]string{"le", "+Inf"})
		return append(out,
			flatSample{name + "_bucket", inf, float64(hist.GetSampleCount())},
			flatSample{name + "_sum", labels, hist.GetSampleSum()},
			flatSample{name + "_count", labels, float64(hist.GetSampleCount())})
	}
	return []flatSample{{name, labels, m.GetGauge().GetValue()}}
}

// scrape gathers the plugin's families; collects run on its worker and may fetch.
func (h *harness) scrape() ([]*dto.MetricFamily, error) {
	var mfs []*dto.MetricFamily
	err := h.pump(func() error {
		var err error
		mfs, err = h.off.Metrics()
		return err
	})
	return mfs, err
}
