package scripting

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// ErrSeriesLimit means a family would have more series than its limit: a collect returned more
// samples, or a handler's ctx.metrics call would start a new series past it.
var ErrSeriesLimit = errors.New("series limit reached")

// MetricSample is one series a collect returned: the values of the family's labels in the
// order they were declared, and its value.
type MetricSample struct {
	Labels []string
	Value  float64
}

// collectFn is a family's collect function and the family object, its `this`.
type collectFn struct {
	fn   goja.Callable
	this *goja.Object
}

// Collect calls metrics[family].collect(ctx) and returns its samples: at most limit of them
// (more is an error wrapping ErrSeriesLimit), each label set once. ev is ctx as the script
// sees it (its Cache, usually). A family without collect returns nothing.
func (s *Script) Collect(family string, ev Event, limit int) ([]MetricSample, error) {
	label := "metrics." + family + ".collect"
	i, ok := slices.BinarySearchFunc(s.def.Metrics, family, func(m MetricSpec, name string) int { return strings.Compare(m.Name, name) })
	if !ok || !s.def.Metrics[i].Collect {
		return nil, s.noop(label)
	}
	spec := s.def.Metrics[i]
	var samples []MetricSample
	err := s.run(label, func(in *instance) (err error) {
		samples, err = in.collect(label, &spec, ev, limit)
		return err
	})
	if err != nil {
		return nil, err // samples may still be written by an abandoned call: never read it here
	}
	return samples, nil
}

func (s *instance) collect(label string, spec *MetricSpec, ev Event, limit int) (samples []MetricSample, err error) {
	if err := s.begin(label); err != nil {
		return nil, err
	}
	defer s.end(&err)
	s.ctx.ev = ev
	c := s.collectFns[spec.Name]
	v, err := s.call(c.this, c.fn, s.ctxObj)
	if err != nil {
		return nil, err
	}
	return s.samples(v, spec, limit)
}

// samples reads a collect's result: an array of {labels, value}, or null for none.
func (s *instance) samples(v goja.Value, spec *MetricSpec, limit int) ([]MetricSample, error) {
	if isMissing(v) {
		return nil, nil
	}
	arr, ok := v.(*goja.Object)
	if !ok || arr.ClassName() != "Array" {
		return nil, s.resultError("must return an array of { labels, value }, got %s", typeName(v))
	}
	n := arr.Get("length").ToInteger()
	if n > int64(limit) {
		return nil, &ScriptError{File: s.name, Err: ErrSeriesLimit, Message: fmt.Sprintf(
			"%s returned %d series; the limit is %d per family (--metric-series-limit)", s.callName, n, limit)}
	}
	out := make([]MetricSample, n)
	seen := make(map[string]struct{}, n)
	var key strings.Builder
	for i := range int(n) {
		sample, err := s.sample(arr.Get(strconv.Itoa(i)), spec, i)
		if err != nil {
			return nil, err
		}
		key.Reset()
		for _, l := range sample.Labels {
			key.WriteString(l)
			key.WriteByte(0xff) // not in any valid UTF-8 string: keys cannot run into each other
		}
		if _, dup := seen[key.String()]; dup {
			return nil, s.resultError("returned two samples with the same labels %s (element %d); each series must be returned once",
				formatLabels(spec.Labels, sample.Labels), i)
		}
		seen[key.String()] = struct{}{}
		out[i] = sample
	}
	return out, nil
}

var sampleKeys = []string{"labels", "value"}

func (s *instance) sample(v goja.Value, spec *MetricSpec, i int) (MetricSample, error) {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return MetricSample{}, s.resultError("returned element %d that is %s, not { labels, value }", i, typeName(v))
	}
	value, ok := sampleValue(obj.Get("value"))
	if !ok {
		if k := unknownKey(obj, sampleKeys); k != "" {
			return MetricSample{}, s.resultError("returned element %d with the unknown key '%s'; a sample is { labels, value }", i, k)
		}
		return MetricSample{}, s.resultError("returned element %d whose value is %s, not a number or boolean", i, typeName(obj.Get("value")))
	}
	if spec.Type == Counter && value < 0 {
		return MetricSample{}, s.resultError("returned element %d with a negative value (%v) for the counter %s", i, value, spec.Name)
	}
	labels, lerr := readLabels(obj.Get("labels"), spec, i == 0) // the first sample in full: a key too many is a mistake in every one
	if lerr != nil {
		return MetricSample{}, s.resultError("returned element %d: %s", i, lerr.msg)
	}
	return MetricSample{Labels: labels, Value: value}, nil
}

// sampleValue is a sample's value: a number, or a boolean as 1 or 0.
func sampleValue(v goja.Value) (float64, bool) {
	if v == nil {
		return 0, false
	}
	switch x := v.Export().(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func unknownKey(obj *goja.Object, valid []string) string {
	for _, k := range obj.Keys() {
		if !slices.Contains(valid, k) {
			return k
		}
	}
	return ""
}

// formatLabels writes label pairs as Prometheus does: {namespace="web",name="app"}.
func formatLabels(names, values []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", n, values[i])
	}
	b.WriteByte('}')
	return b.String()
}
