package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/status"
)

// The script metrics through the versions' life: saves, drains and removals never fail a
// scrape and leave nothing behind.

// slowFirstScript spends 5 s in onAdd of the ConfigMap "slow" (after counting it), so a
// version retired meanwhile drains with a backlog; tag tells contents apart.
func slowFirstScript(ns, tag string) string {
	return watchScript(ns, `  metrics: { test_seen_`+tag+`_total: { type: "counter", help: "adds", labels: ["name"] } },
  onAdd(cm, ctx) {
    ctx.metrics.test_seen_`+tag+`_total.inc({ name: cm.metadata.name });
    if (cm.metadata.name === "slow") { const until = Date.now() + 5000; while (Date.now() < until) {} }
  },`)
}

// metricsServer serves reg as the runner's /metrics does, on loopback.
func metricsServer(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url) //nolint:noctx // test read
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// Saving A, then B, then A again while the first A still drains makes two live versions with
// the same script and content: every scrape meanwhile answers 200, with one queue-depth
// series per script and content.
func TestScrapesThroughASaveBackToADrainingContent(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	ns := uniqueName("save-back")
	r := startEngine(t, nil, func(c *engine.Config) { c.Registerer, c.HandlerTimeout = reg, 10*time.Second })
	r.namespace(t, ns)
	url := metricsServer(t, reg) + "/metrics"
	a, b := slowFirstScript(ns, "a"), watchScript(ns, `  onAdd() {},`) // B syncs at once
	r.write(t, "s.js", a)
	waitLoad(t, r, "s.js", status.LoadLoaded, "")
	for _, name := range []string{"slow", "x1", "x2", "x3"} {
		r.create(t, configmapsGVR, configmap(ns, name, nil, nil))
	}
	waitScript(t, r.engine, "s.js", "A busy on slow with a backlog", func(s status.ScriptStatus) bool {
		cur, ok := s.Current()
		return ok && cur.Queued >= 2
	})

	var stop atomic.Bool
	var scrapes sync.WaitGroup
	var twice, failed atomic.Int32
	var lastFailure atomic.Value
	scrapes.Go(func() {
		for !stop.Load() {
			twoA := countVersions(r.engine, "s.js", hashOf(a)) == 2
			code, body, err := get(url)
			if err != nil || code != http.StatusOK {
				failed.Add(1)
				lastFailure.Store(strings.TrimSpace(body))
				continue
			}
			if twoA {
				twice.Add(1)
			}
		}
	})
	r.write(t, "s.js", b)
	waitScript(t, r.engine, "s.js", "B serving, A draining", func(s status.ScriptStatus) bool {
		cur, ok := s.Current()
		return ok && cur.Hash == hashOf(b)
	})
	r.write(t, "s.js", a)
	waitScript(t, r.engine, "s.js", "A serving again and the first A done", func(s status.ScriptStatus) bool {
		cur, ok := s.Current()
		return ok && cur.Hash == hashOf(a) && countVersions(r.engine, "s.js", hashOf(a)) == 1
	})
	stop.Store(true)
	scrapes.Wait()
	if failed.Load() > 0 {
		t.Errorf("%d scrapes failed during the saves; the last: %v", failed.Load(), lastFailure.Load())
	}
	if twice.Load() == 0 {
		t.Error("no scrape saw the two versions of A alive: the test showed nothing")
	}
}

// countVersions is how many live versions of script have content hash.
func countVersions(e *engine.Engine, script, hash string) int {
	s, ok := e.Status().Script(script)
	if !ok {
		return 0
	}
	n := 0
	for _, v := range s.Versions {
		if v.Hash == hash && (v.State == status.VersionSyncing || v.State == status.VersionCurrent || v.State == status.VersionDraining) {
			n++
		}
	}
	return n
}

// A removed script leaves no series behind, also when its version, draining, still fails to
// update a family after its series were withdrawn.
func TestRemovedScriptLeavesNoSeries(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	ns := uniqueName("removed-series")
	r := startEngine(t, nil, func(c *engine.Config) {
		c.Registerer, c.HandlerTimeout, c.MetricSeriesLimit = reg, 10*time.Second, 1
	})
	r.namespace(t, ns)
	url := metricsServer(t, reg) + "/metrics"
	r.write(t, "gone.js", slowFirstScript(ns, "gone"))
	waitLoad(t, r, "gone.js", status.LoadLoaded, "")
	for _, name := range []string{"slow", "x1", "x2", "x3"} {
		r.create(t, configmapsGVR, configmap(ns, name, nil, nil))
	}
	waitScript(t, r.engine, "gone.js", "busy on slow with a backlog", func(s status.ScriptStatus) bool {
		cur, ok := s.Current()
		return ok && cur.Queued >= 2
	})
	if _, body, err := get(url); err != nil || !strings.Contains(body, `jsinformer_script_metric_errors_total{metric="test_seen_gone_total",reason="limit",script="gone.js"}`) {
		t.Fatalf("before the removal the script's error series is not served (%v):\n%s", err, body)
	}
	if err := os.Remove(filepath.Join(r.dir, "gone.js")); err != nil {
		t.Fatal(err)
	}
	// The draining version handles its backlog, each add past the series limit, then ends.
	waitSeriesLogged(t, reg, r, "jsinformer_script_versions", "every version ended", equalSeries(map[string]float64{"": 0}))
	code, body, err := get(url)
	if err != nil || code != http.StatusOK {
		t.Fatalf("/metrics: %d, %v", code, err)
	}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "#") && strings.Contains(line, `script="gone.js"`) {
			t.Errorf("left behind: %s", line)
		}
	}
}
