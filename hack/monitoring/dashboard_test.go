package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dashboard is the part of Grafana's dashboard model the test reads.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int                      `json:"id"`
	Type       string                   `json:"type"`
	Title      string                   `json:"title"`
	Datasource datasource               `json:"datasource"`
	GridPos    struct{ X, Y, W, H int } `json:"gridPos"`
	Targets    []struct {
		Expr       string     `json:"expr"`
		Datasource datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type datasource struct {
	UID string `json:"uid"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	return d
}

// variable matches Grafana's $name and ${name} references.
var variable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// substitute replaces the dashboard's and Grafana's variables with values PromQL accepts, so
// the query can be parsed; an unknown variable is an error.
func substitute(query string, vars map[string]string) (string, error) {
	var err error
	out := variable.ReplaceAllStringFunc(query, func(ref string) string {
		name := variable.FindStringSubmatch(ref)[1]
		v, ok := vars[name]
		if !ok {
			err = fmt.Errorf("unknown variable %s", ref)
		}
		return v
	})
	return out, err
}

// labelValues matches the variable query label_values(SELECTOR, LABEL).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)

// TestDashboardQueriesNameKnownMetrics parses every panel query and variable query of the
// dashboard and checks the metrics they name; and that every metric of metrics.txt is shown.
func TestDashboardQueriesNameKnownMetrics(t *testing.T) {
	t.Parallel()
	d := loadDashboard(t)
	known := knownSeries(t)
	known[scriptSeriesPlaceholder] = scriptSeriesPlaceholder
	vars := map[string]string{"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}
	for _, v := range d.Templating.List {
		vars[v.Name] = "x"
	}
	used := map[string]bool{}
	check := func(where, query string) {
		// The script-defined series are selected by name through the metric variable, whose
		// values are the families jsinformer_script_metric_errors_total lists (checked as the
		// variable's query); the selector is checked as one naming a placeholder series.
		query = strings.ReplaceAll(query, scriptSeriesSelector, scriptSeriesPlaceholder+"{")
		q, err := substitute(query, vars)
		if err != nil {
			t.Errorf("%s: %v", where, err)
		}
		for _, m := range checkNames(t, known, where, q) {
			used[m] = true
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)["query"].(string)
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable %s: query %q, want label_values(SELECTOR, LABEL)", v.Name, q)
			continue
		}
		check("variable "+v.Name, m[1])
	}
	for _, p := range allPanels(d.Panels) {
		for _, target := range p.Targets {
			check(fmt.Sprintf("panel %q", p.Title), target.Expr)
		}
	}
	for _, metric := range known {
		if metric != "up" && metric != scriptSeriesPlaceholder && !used[metric] {
			t.Errorf("no panel shows %s", metric)
			used[metric] = true // once per metric, not per histogram series
		}
	}
}

const (
	scriptSeriesSelector    = `{__name__=~"$metric", `
	scriptSeriesPlaceholder = "script_defined_series"
)

// TestDashboardShowsScriptSeries: one panel shows the series scripts define, chosen with a
// metric variable listing their families.
func TestDashboardShowsScriptSeries(t *testing.T) {
	t.Parallel()
	d := loadDashboard(t)
	shown := slices.ContainsFunc(allPanels(d.Panels), func(p panel) bool {
		return slices.ContainsFunc(p.Targets, func(target struct {
			Expr       string     `json:"expr"`
			Datasource datasource `json:"datasource"`
		}) bool {
			return strings.HasPrefix(target.Expr, scriptSeriesSelector)
		})
	})
	if !shown {
		t.Errorf("no panel selects %s...}", scriptSeriesSelector)
	}
	if !slices.ContainsFunc(d.Templating.List, func(v struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Query any    `json:"query"`
	}) bool {
		query, _ := v.Query.(map[string]any)
		q, _ := query["query"].(string)
		return v.Name == "metric" && strings.HasPrefix(q, "label_values(jsinformer_script_metric_errors_total{") && strings.HasSuffix(q, ", metric)")
	}) {
		t.Error("no variable metric lists the script families")
	}
}

// TestDashboardLayout checks what Grafana would import silently wrong: duplicate panel ids,
// panels overlapping or wider than the grid, queries not bound to the data source variable.
func TestDashboardLayout(t *testing.T) {
	t.Parallel()
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q title %q: want both", d.UID, d.Title)
	}
	panels := allPanels(d.Panels)
	ids := map[int]bool{}
	for i, p := range panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if g := p.GridPos; g.X < 0 || g.W <= 0 || g.H <= 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
		for _, q := range panels[:i] {
			if overlap(p, q) {
				t.Errorf("panels %q and %q overlap", p.Title, q.Title)
			}
		}
		checkBinding(t, p)
	}
}

func checkBinding(t *testing.T, p panel) {
	t.Helper()
	if p.Type == "row" {
		return
	}
	if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
		t.Errorf("panel %q: data source %q with %d queries, want ${datasource} and at least one", p.Title, p.Datasource.UID, len(p.Targets))
	}
	for _, target := range p.Targets {
		if target.Datasource.UID != "${datasource}" || target.Expr == "" {
			t.Errorf("panel %q: a query on data source %q reads %q", p.Title, target.Datasource.UID, target.Expr)
		}
	}
}

func overlap(a, b panel) bool {
	ga, gb := a.GridPos, b.GridPos
	return ga.X < gb.X+gb.W && gb.X < ga.X+ga.W && ga.Y < gb.Y+gb.H && gb.Y < ga.Y+ga.H
}

// allPanels flattens rows: a collapsed row keeps its panels inside it.
func allPanels(panels []panel) []panel {
	var all []panel
	for _, p := range panels {
		all = append(all, p)
		all = append(all, allPanels(p.Panels)...)
	}
	return all
}
