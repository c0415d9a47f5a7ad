package scripting

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/dop251/goja"
)

// Metrics is the Go side of ctx.metrics: the series of the families a script updates from its
// handlers (those without collect). labels are the values of the family's label names, in the
// order they were declared. An error (such as the family's series limit) is thrown to the
// script. Implementations must be safe for concurrent use: reconcile workers share them.
type Metrics interface {
	// Add adds n to a counter (n ≥ 0, checked here) or a gauge series.
	Add(family string, labels []string, n float64) error
	// Set sets a gauge series.
	Set(family string, labels []string, value float64) error
	// Observe adds value to a histogram series.
	Observe(family string, labels []string, value float64) error
}

// metricHandleKeys are the members of each ctx.metrics.NAME: every family has all four, and
// the ones that do not fit its type throw, naming the ones that do.
var metricHandleKeys = []string{"inc", "dec", "set", "observe"}

// metricsObject is ctx.metrics: one read-only handle per family without collect, writing
// through the current call's Event.Metrics. Used only on the executor goroutine (env.go).
type metricsObject struct {
	*callEnv
	ev    *Event
	specs []MetricSpec
}

func newMetricsObject(env *callEnv, ev *Event, specs []MetricSpec) *metricsObject {
	return &metricsObject{callEnv: env, ev: ev, specs: specs}
}

func (m *metricsObject) exports() *goja.Object {
	keys, vals := []string{}, map[string]goja.Value{}
	for i := range m.specs {
		spec := &m.specs[i]
		if spec.Collect {
			continue
		}
		keys = append(keys, spec.Name)
		vals[spec.Name] = m.handle(spec)
	}
	return m.rt.NewDynamicObject(&frozen{rt: m.rt, keys: keys, vals: vals})
}

func (m *metricsObject) handle(spec *MetricSpec) goja.Value {
	prefix := "ctx.metrics." + spec.Name + "."
	return m.rt.NewDynamicObject(&frozen{rt: m.rt, keys: metricHandleKeys, vals: map[string]goja.Value{
		"inc": m.rt.ToValue(func(call goja.FunctionCall) goja.Value {
			return m.add(prefix+"inc", spec, call, 1)
		}),
		"dec": m.rt.ToValue(func(call goja.FunctionCall) goja.Value {
			return m.add(prefix+"dec", spec, call, -1)
		}),
		"set": m.rt.ToValue(func(call goja.FunctionCall) goja.Value {
			return m.write(prefix+"set", spec, call, Gauge, Metrics.Set)
		}),
		"observe": m.rt.ToValue(func(call goja.FunctionCall) goja.Value {
			return m.write(prefix+"observe", spec, call, Histogram, Metrics.Observe)
		}),
	}})
}

// add is inc(labels?, n = 1) and dec(labels?, n = 1).
func (m *metricsObject) add(fn string, spec *MetricSpec, call goja.FunctionCall, sign float64) goja.Value {
	defer m.guard(fn)
	switch {
	case spec.Type == Histogram:
		m.wrongType(fn, spec, "observe(value, labels)")
	case spec.Type == Counter && sign < 0:
		m.wrongType(fn, spec, "inc(labels, n)")
	}
	n := 1.0
	if v := call.Argument(1); !isMissing(v) {
		n = m.finite(fn, v, "n")
		if spec.Type == Counter && n < 0 {
			m.throwRange("%s: a counter only goes up; n is %v", fn, n)
		}
	}
	labels := m.labelValues(fn, spec, call.Argument(0))
	return m.send(fn, func(sink Metrics) error { return sink.Add(spec.Name, labels, sign*n) })
}

// write is set(value, labels?) for gauges and observe(value, labels?) for histograms.
func (m *metricsObject) write(fn string, spec *MetricSpec, call goja.FunctionCall, want MetricType,
	op func(Metrics, string, []string, float64) error) goja.Value {
	defer m.guard(fn)
	if spec.Type != want {
		hint := "inc(labels, n)"
		if spec.Type == Histogram {
			hint = "observe(value, labels)"
		}
		m.wrongType(fn, spec, hint)
	}
	value := m.finite(fn, call.Argument(0), "value")
	labels := m.labelValues(fn, spec, call.Argument(1))
	return m.send(fn, func(sink Metrics) error { return op(sink, spec.Name, labels, value) })
}

func (m *metricsObject) send(fn string, op func(Metrics) error) goja.Value {
	if m.ev.Metrics == nil {
		m.throwf("%s: ctx.metrics is not available here", fn)
	}
	if err := op(m.ev.Metrics); err != nil {
		m.throwf("%s: %w", fn, err)
	}
	return goja.Undefined()
}

func (m *metricsObject) wrongType(fn string, spec *MetricSpec, hint string) {
	panic(m.rt.NewTypeError(fmt.Sprintf("%s: %s is a %s; use %s", fn, spec.Name, spec.Type, hint)))
}

func (m *metricsObject) finite(fn string, v goja.Value, param string) float64 {
	f, ok := number(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		panic(m.rt.NewTypeError(fmt.Sprintf("%s: %s must be a finite number, got %s", fn, param, typeName(v))))
	}
	return f
}

// labelValues reads a labels object: the family's label names, each a string, number or
// boolean (absent, null or undefined is ""), of at most MaxLabelValueLength characters. Any
// other key throws: a misspelt label would otherwise silently be "".
func (m *metricsObject) labelValues(fn string, spec *MetricSpec, v goja.Value) []string {
	values, err := readLabels(v, spec, true)
	if err != nil {
		if err.rangeErr {
			m.throwRange("%s: %s", fn, err.msg)
		}
		panic(m.rt.NewTypeError(fmt.Sprintf("%s: %s", fn, err.msg)))
	}
	return values
}

// labelError is why a labels object was refused; rangeErr marks a value too long.
type labelError struct {
	msg      string
	rangeErr bool
}

// readLabels reads the values of spec's labels from v, a labels object (or nothing, when the
// family has no labels). Shared by ctx.metrics and collect results. Unknown keys are looked
// for when a declared label is missing (a misspelt one is), and always when strict: listing
// an object's keys costs a third of reading a collect's sample.
func readLabels(v goja.Value, spec *MetricSpec, strict bool) ([]string, *labelError) {
	if isMissing(v) {
		if len(spec.Labels) > 0 {
			return make([]string, len(spec.Labels)), nil
		}
		return nil, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return nil, &labelError{msg: "labels must be an object such as { namespace: \"web\" }, got " + typeName(v)}
	}
	values := make([]string, len(spec.Labels))
	found := 0
	for i, name := range spec.Labels {
		el := obj.Get(name)
		if isMissing(el) {
			continue
		}
		found++
		s, err := labelValue(name, el)
		if err != nil {
			return nil, err
		}
		values[i] = s
	}
	if !strict && found == len(spec.Labels) {
		return values, nil
	}
	if keys := obj.Keys(); len(keys) != found {
		for _, k := range keys {
			if !slices.Contains(spec.Labels, k) {
				return nil, &labelError{msg: unknownLabel(k, spec)}
			}
		}
	}
	return values, nil
}

func labelValue(name string, v goja.Value) (string, *labelError) {
	switch v.ExportType() {
	case reflect.TypeFor[string](), reflect.TypeFor[int64](), reflect.TypeFor[float64](), reflect.TypeFor[bool]():
	default:
		return "", &labelError{msg: fmt.Sprintf("label %s must be a string, number or boolean, got %s", name, typeName(v))}
	}
	if isString(v) && jsLength(v) > MaxLabelValueLength {
		return "", &labelError{msg: fmt.Sprintf("label %s is %d characters long; the limit is %d", name, jsLength(v), MaxLabelValueLength), rangeErr: true}
	}
	return v.String(), nil
}

func unknownLabel(k string, spec *MetricSpec) string {
	msg := fmt.Sprintf("unknown label '%s' for %s", k, spec.Name)
	if len(spec.Labels) == 0 {
		return msg + ", which declares no labels"
	}
	if s := closest(k, spec.Labels); s != "" {
		return msg + fmt.Sprintf("; did you mean '%s'?", s)
	}
	return msg + fmt.Sprintf("; its labels are %v", spec.Labels)
}
