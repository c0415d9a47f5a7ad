package monitoring

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// dir is deploy/monitoring, relative to this package.
var dir = filepath.Join("..", "..", "deploy", "monitoring")

// promql parses as a stock Prometheus does: no experimental functions or syntax.
var stockParser = parser.NewParser(parser.Options{})

// knownSeries maps every series name the rules and the dashboard may use to the metric it
// belongs to: each metric of metrics.txt (a histogram as its _bucket, _sum and _count
// series), and Prometheus's own `up`.
func knownSeries(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	known := map[string]string{"up": "up"}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := addMetric(known, strings.Fields(line)); err != nil {
			t.Fatalf("metrics.txt: %v", err)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return known
}

func addMetric(known map[string]string, fields []string) error {
	if len(fields) != 2 {
		return fmt.Errorf("line %q: want a name and a type", strings.Join(fields, " "))
	}
	name, kind := fields[0], fields[1]
	switch kind {
	case "counter", "gauge":
		known[name] = name
	case "histogram":
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			known[name+suffix] = name
		}
	default:
		return fmt.Errorf("%s: type %q, want counter, gauge or histogram", name, kind)
	}
	return nil
}

// seriesNames lists the metric names the selectors of expr name; a selector without a metric
// name is reported as "".
func seriesNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			names = append(names, vs.Name)
		}
		return nil
	})
	return names
}

// checkNames parses query and reports, as errors on t naming where, a parse error or a series
// that is not known. It returns the metrics the query uses.
func checkNames(t *testing.T, known map[string]string, where, query string) []string {
	t.Helper()
	expr, err := stockParser.ParseExpr(query)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return nil
	}
	var used []string
	for _, name := range seriesNames(expr) {
		metric, ok := known[name]
		if !ok {
			t.Errorf("%s: series %q is not a metric of metrics.txt (%s)", where, name, query)
		}
		used = append(used, metric)
	}
	return used
}
