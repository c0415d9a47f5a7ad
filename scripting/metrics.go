package scripting

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// Metrics: `metrics: { name: { type, help, labels, buckets, collect(ctx) } }`. A family with
// collect is computed at scrape time (Script.Collect); one without is updated by handlers
// through ctx.metrics (metricsctx.go). The engine serves both; this file only reads and
// validates the declarations.

// MetricType is a family's Prometheus type.
type MetricType string

// The metric types a script may declare.
const (
	Gauge     MetricType = "gauge"
	Counter   MetricType = "counter"
	Histogram MetricType = "histogram"
)

// MetricSpec is one family of a definition's `metrics`.
type MetricSpec struct {
	Name   string
	Help   string
	Type   MetricType
	Labels []string // label names, in the order they are declared
	// Buckets are a histogram's upper bounds, increasing; nil means the Prometheus defaults.
	Buckets []float64
	// Collect: the family is computed by its collect(ctx) at scrape time; otherwise handlers
	// update it through ctx.metrics.
	Collect bool
	// Line is where the family is declared, for errors found beyond this script (a family
	// another script declares too).
	Line int
}

// ExposedNames are the sample names the family produces: a histogram's _bucket, _sum and
// _count, the name itself otherwise. Two families of one process must not share any.
func (m MetricSpec) ExposedNames() []string {
	if m.Type == Histogram {
		return []string{m.Name + "_bucket", m.Name + "_sum", m.Name + "_count"}
	}
	return []string{m.Name}
}

// ReservedMetricPrefixes are the name prefixes of the runner's own series (and of the Go and
// process collectors it serves beside them); script families may not use them.
var ReservedMetricPrefixes = []string{"jsinformer_", "go_", "process_", "promhttp_"}

const (
	// maxMetricFamilies bounds one script's `metrics`.
	maxMetricFamilies = 100
	// maxMetricLabels bounds a family's label names.
	maxMetricLabels = 16
	// maxMetricBuckets bounds a histogram's buckets.
	maxMetricBuckets = 64
	// MaxLabelValueLength is the longest label value, in characters, a sample may carry:
	// Prometheus stores every distinct value in its index, and a value that long is a mistake
	// (an object's JSON, a message) rather than a label.
	MaxLabelValueLength = 256
	// maxMetricHelp bounds a family's help text.
	maxMetricHelp = 1024
)

var (
	metricNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	labelNameRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	metricKeys   = []string{"type", "help", "labels", "buckets", "collect"}
	metricTypes  = []string{string(Gauge), string(Counter), string(Histogram)}
)

// readMetrics reads the optional `metrics` object, keeps each collect function and builds
// ctx.metrics for the families handlers update.
func (s *instance) readMetrics(v goja.Value, l locator) error {
	if isMissing(v) {
		s.ctx.metrics = newMetricsObject(s.callEnv, &s.ctx.ev, nil).exports()
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return invalidf(l.file, l.line("metrics"), fmt.Sprintf(
			"'metrics' must be an object mapping metric names to {type, help, labels, collect}, got %s", typeName(v)))
	}
	names := obj.Keys()
	if len(names) > maxMetricFamilies {
		return invalidf(l.file, l.line("metrics"), fmt.Sprintf("'metrics' declares %d families; the limit is %d", len(names), maxMetricFamilies))
	}
	s.collectFns = map[string]collectFn{}
	exposed := map[string]string{}
	for _, name := range names {
		spec, fn, err := readMetric(name, obj.Get(name), l)
		if err != nil {
			return err
		}
		for _, n := range spec.ExposedNames() {
			if other, dup := exposed[n]; dup {
				return invalidf(l.file, spec.Line, fmt.Sprintf("'metrics.%s' and 'metrics.%s' would both expose the series %s", other, name, n))
			}
			exposed[n] = name
		}
		if fn != nil {
			s.collectFns[name] = collectFn{fn: fn, this: obj.Get(name).(*goja.Object)} // an object: readMetric checked
		}
		s.def.Metrics = append(s.def.Metrics, spec)
	}
	slices.SortFunc(s.def.Metrics, func(a, b MetricSpec) int { return strings.Compare(a.Name, b.Name) })
	s.ctx.metrics = newMetricsObject(s.callEnv, &s.ctx.ev, s.def.Metrics).exports()
	return nil
}

func readMetric(name string, v goja.Value, l locator) (MetricSpec, goja.Callable, error) {
	where := "metrics." + name
	spec := MetricSpec{Name: name, Line: l.line(name)}
	bad := func(format string, args ...any) (MetricSpec, goja.Callable, error) {
		return MetricSpec{}, nil, invalidf(l.file, spec.Line, fmt.Sprintf(format, args...))
	}
	if err := checkMetricName(name); err != "" {
		return bad("metric name '%s' %s", name, err)
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return bad("'%s' must be an object {type, help, labels, collect}, got %s", where, typeName(v))
	}
	if err := l.checkKeys(obj, where, metricKeys); err != nil {
		return MetricSpec{}, nil, err
	}
	typ, help := obj.Get("type"), obj.Get("help")
	if !isString(typ) || !slices.Contains(metricTypes, typ.String()) {
		return bad("'%s.type' must be one of %s, got %s", where, strings.Join(metricTypes, ", "), typeName(typ))
	}
	spec.Type = MetricType(typ.String())
	if !isString(help) || help.String() == "" || jsLength(help) > maxMetricHelp {
		return bad("'%s.help' must be a non-empty string of at most %d characters describing the metric, got %s", where, maxMetricHelp, typeName(help))
	}
	spec.Help = help.String()
	var err error
	if spec.Labels, err = readLabelNames(obj.Get("labels"), where, l, spec.Line); err != nil {
		return MetricSpec{}, nil, err
	}
	if spec.Buckets, err = readBuckets(obj.Get("buckets"), spec, where, l); err != nil {
		return MetricSpec{}, nil, err
	}
	fn, err := optionalFunc(obj.Get("collect"), where+".collect", l)
	if err != nil {
		return MetricSpec{}, nil, err
	}
	spec.Collect = fn != nil
	if spec.Collect && spec.Type == Histogram {
		return bad("'%s' is a histogram: histograms are updated by handlers with ctx.metrics.%s.observe(value, labels) and cannot have collect", where, name)
	}
	return spec, fn, nil
}

// checkMetricName explains why name cannot be a script's family, or returns "".
func checkMetricName(name string) string {
	if !metricNameRE.MatchString(name) {
		return "is not a Prometheus metric name (letters, digits and underscores, not starting with a digit)"
	}
	for _, p := range ReservedMetricPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Sprintf("uses the prefix %s, reserved for the runner's own metrics", p)
		}
	}
	return ""
}

func readLabelNames(v goja.Value, where string, l locator, line int) ([]string, error) {
	if isMissing(v) {
		return nil, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, invalidf(l.file, line, fmt.Sprintf("'%s.labels' must be a list of label names, got %s", where, typeName(v)))
	}
	n := obj.Get("length").ToInteger()
	if n > maxMetricLabels {
		return nil, invalidf(l.file, line, fmt.Sprintf("'%s.labels' has %d names; the limit is %d", where, n, maxMetricLabels))
	}
	labels := make([]string, 0, n)
	for i := range int(n) {
		el := obj.Get(strconv.Itoa(i))
		switch {
		case !isString(el) || !labelNameRE.MatchString(el.String()):
			return nil, invalidf(l.file, line, fmt.Sprintf("'%s.labels[%d]' must be a label name (letters, digits and underscores, not starting with a digit), got %s", where, i, typeName(el)))
		case strings.HasPrefix(el.String(), "__"):
			return nil, invalidf(l.file, line, fmt.Sprintf("'%s.labels[%d]' %q: names starting with __ are reserved by Prometheus", where, i, el.String()))
		case el.String() == "le":
			return nil, invalidf(l.file, line, fmt.Sprintf("'%s.labels[%d]': \"le\" is reserved for histogram buckets", where, i))
		case slices.Contains(labels, el.String()):
			return nil, invalidf(l.file, line, fmt.Sprintf("'%s.labels' names %q twice", where, el.String()))
		}
		labels = append(labels, el.String())
	}
	return labels, nil
}

func readBuckets(v goja.Value, spec MetricSpec, where string, l locator) ([]float64, error) {
	if isMissing(v) {
		return nil, nil
	}
	if spec.Type != Histogram {
		return nil, invalidf(l.file, spec.Line, fmt.Sprintf("'%s.buckets' is only for histograms; this is a %s", where, spec.Type))
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, invalidf(l.file, spec.Line, fmt.Sprintf("'%s.buckets' must be a list of increasing numbers, got %s", where, typeName(v)))
	}
	n := obj.Get("length").ToInteger()
	if n == 0 || n > maxMetricBuckets {
		return nil, invalidf(l.file, spec.Line, fmt.Sprintf("'%s.buckets' must have 1 to %d bounds, got %d", where, maxMetricBuckets, n))
	}
	buckets := make([]float64, 0, n)
	for i := range int(n) {
		b, ok := number(obj.Get(strconv.Itoa(i)))
		if !ok || math.IsNaN(b) || math.IsInf(b, 0) || (i > 0 && b <= buckets[i-1]) {
			return nil, invalidf(l.file, spec.Line, fmt.Sprintf("'%s.buckets' must be finite numbers in increasing order; [%d] is %s", where, i, typeName(obj.Get(strconv.Itoa(i)))))
		}
		buckets = append(buckets, b)
	}
	return buckets, nil
}

// number is v as a float64 when it is a JS number.
func number(v goja.Value) (float64, bool) {
	if v == nil {
		return 0, false
	}
	switch x := v.Export().(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
