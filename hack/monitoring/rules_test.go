package monitoring

import (
	"bytes"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

// loadRules parses alerts.yaml strictly (unknown fields are errors), validating every
// expression and template as Prometheus does when it loads the file.
func loadRules(t *testing.T) []rulefmt.Rule {
	t.Helper()
	groups, errs := rulefmt.ParseFile(filepath.Join(dir, "alerts.yaml"), false, model.LegacyValidation, stockParser, slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	var all []rulefmt.Rule
	for _, g := range groups.Groups {
		all = append(all, g.Rules...)
	}
	return all
}

func TestRulesNameKnownMetrics(t *testing.T) {
	t.Parallel()
	known := knownSeries(t)
	for _, r := range loadRules(t) {
		checkNames(t, known, r.Alert, r.Expr)
		if r.Alert == "" {
			t.Errorf("recording rule %q: alerts.yaml holds alerts only", r.Record)
		}
		if s := r.Labels["severity"]; s != "warning" && s != "critical" {
			t.Errorf("%s: severity %q, want warning or critical", r.Alert, s)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: want a summary and a description", r.Alert)
		}
	}
}

// healthy is two runners, one leading, in namespace "ok", as series for 40 minutes at one
// sample a minute: the starting point of every scenario. Keys are series, values promqltest's
// sample notation ("1x40" is 41 samples of 1, "0+100x40" a counter growing by 100 a minute).
func healthy() map[string]string {
	const p1, p2 = `namespace="ok", pod="p1"`, `namespace="ok", pod="p2"`
	const call = `namespace="ok", pod="p1", script="a.js", handler="onAdd"`
	return map[string]string{
		"jsinformer_ready{" + p1 + "}":                                                                 "1x40",
		"jsinformer_ready{" + p2 + "}":                                                                 "1x40",
		"jsinformer_leader{" + p1 + "}":                                                                "1x40",
		"jsinformer_leader{" + p2 + "}":                                                                "0x40",
		"jsinformer_informer_healthy{" + p1 + `, informer="apps/v1/deployments"}`:                      "1x40",
		"jsinformer_informer_relists_total{" + p1 + `, informer="apps/v1/deployments"}`:                "0x20 1x20",
		"jsinformer_handler_calls_total{" + call + `, result="ok"}`:                                    "0+100x40",
		"jsinformer_handler_calls_total{" + call + `, result="error"}`:                                 "0+1x40",
		"jsinformer_handler_calls_total{" + call + `, result="timeout"}`:                               "0x40",
		"jsinformer_queue_depth{" + p1 + `, script="a.js", version="abc"}`:                             "5 150 3 0 7 120 2 0 4 1 0x30",
		"jsinformer_script_loads_total{" + p1 + `, script="a.js", result="loaded"}`:                    "1x40",
		"jsinformer_script_loads_total{" + p1 + `, script="a.js", result="failed"}`:                    "0x40",
		"jsinformer_script_stopped{" + p1 + `, script="a.js"}`:                                         "0x40",
		"jsinformer_script_metric_errors_total{" + p1 + `, script="a.js", metric="m", reason="error"}`: "0x20 1x20", // one failed scrape
		"jsinformer_admission_decisions_total{" + admit + `, outcome="allowed"}`:                       "0+100x40",
		"jsinformer_admission_decisions_total{" + admit + `, outcome="denied"}`:                        "0+10x40",
		"jsinformer_admission_decisions_total{" + admit + `, outcome="errored"}`:                       "0+1x40",
		`up{job="unrelated"}`: "1x40",
		"jsinformer_audit_results{" + p1 + `, script="team.js", result="pass"}`:  "70x40",
		"jsinformer_audit_results{" + p1 + `, script="team.js", result="fail"}`:  "30x40",
		"jsinformer_audit_results{" + p1 + `, script="team.js", result="error"}`: "0x40",
		"jsinformer_audit_results{" + p2 + `, script="team.js", result="fail"}`:  "30x40", // the follower audits too
		"jsinformer_audit_results{" + p2 + `, script="team.js", result="error"}`: "0x40",
		"jsinformer_shard_pending{" + p1 + "}":                                   "0x10 1x2 0x28", // a move of two minutes
		"jsinformer_shard_pending{" + p2 + "}":                                   "0x10 1x2 0x28",
		"jsinformer_shard_cached_objects{" + p1 + `, script="s.js"}`:             "1000x40",
		"jsinformer_shard_cached_objects{" + p2 + `, script="s.js"}`:             "1100x40",
	}
}

// admit is the labels of a validate policy's admission series in the healthy runners.
const admit = `namespace="ok", pod="p1", script="policy.js", webhook="validate", operation="CREATE"`

// TestAlertsFireOnTheirFailureOnly evaluates every rule each minute over 40 minutes of
// synthetic series, as Prometheus would, and checks which alerts fire at the end: none for the
// healthy runners, exactly the one named for each failure.
func TestAlertsFireOnTheirFailureOnly(t *testing.T) {
	t.Parallel()
	const p1, p2 = `namespace="ok", pod="p1"`, `namespace="ok", pod="p2"`
	const call = `namespace="ok", pod="p1", script="a.js", handler="onAdd"`
	tests := []struct {
		want   string // the alert expected to fire; "" for none
		change map[string]string
	}{
		{"", nil},
		{"JsinformerAbsent", map[string]string{"jsinformer_ready{" + p1 + "}": "", "jsinformer_ready{" + p2 + "}": ""}},
		{"JsinformerNotReady", map[string]string{"jsinformer_ready{" + p2 + "}": "1x10 0x29"}},
		{"JsinformerNoLeader", map[string]string{"jsinformer_leader{" + p1 + "}": "1x20 0x19"}},
		{"JsinformerSeveralLeaders", map[string]string{"jsinformer_leader{" + p2 + "}": "0x20 1x19"}},
		{"JsinformerWatchUnhealthy", map[string]string{"jsinformer_informer_healthy{" + p1 + `, informer="apps/v1/deployments"}`: "1x20 0x19"}},
		{"JsinformerRelistingOften", map[string]string{"jsinformer_informer_relists_total{" + p1 + `, informer="apps/v1/deployments"}`: "0x20 1+1x19"}},
		{"JsinformerHandlerErrors", map[string]string{"jsinformer_handler_calls_total{" + call + `, result="timeout"}`: "0x20 0+20x19"}},
		{"JsinformerQueueGrowing", map[string]string{"jsinformer_queue_depth{" + p1 + `, script="a.js", version="abc"}`: "5x10 10+20x29"}},
		{"JsinformerScriptLoadFailed", map[string]string{"jsinformer_script_loads_total{" + p1 + `, script="a.js", result="failed"}`: "0x35 1x4"}},
		{"JsinformerScriptStopped", map[string]string{"jsinformer_script_stopped{" + p1 + `, script="a.js"}`: "0x35 1x4"}},
		{"JsinformerAdmissionErrors", map[string]string{"jsinformer_admission_decisions_total{" + admit + `, outcome="errored"}`: "0x20 0+20x19"}},
		{"", map[string]string{"jsinformer_admission_decisions_total{" + admit + `, outcome="denied"}`: "0x20 0+500x19"}}, // denials are no errors
		{"JsinformerAuditErrors", map[string]string{"jsinformer_audit_results{" + p1 + `, script="team.js", result="error"}`: "0x20 2x19"}},
		{"", map[string]string{"jsinformer_audit_results{" + p1 + `, script="team.js", result="fail"}`: "30x20 5000x19"}}, // failures are the policy's job
		{"", map[string]string{"jsinformer_audit_results{" + p1 + `, script="team.js", result="error"}`: "0x30 3x5 0x4"}}, // a few minutes of errors, fixed
		{"JsinformerShardMoveStuck", map[string]string{"jsinformer_shard_pending{" + p2 + "}": "0x10 1x30"}},
		{"JsinformerShardCacheSkew", map[string]string{"jsinformer_shard_cached_objects{" + p2 + `, script="s.js"}`: "1100x5 4000x35"}},
		{"", map[string]string{"jsinformer_shard_cached_objects{" + p2 + `, script="s.js"}`: "1100x30 4000x10"}}, // skew for 10 minutes: a move
		{"JsinformerScriptMetricFailing", map[string]string{"jsinformer_script_metric_errors_total{" + p1 + `, script="a.js", metric="m", reason="error"}`: "0x20 0+1x19"}},
	}
	all := loadRules(t)
	for _, tt := range tests {
		name := tt.want
		if name == "" {
			name = "healthy"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			series := healthy()
			for k, v := range tt.change {
				series[k] = v
			}
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if got := firing(t, all, series, 40*time.Minute); !slices.Equal(got, want) {
				t.Fatalf("firing at 40m: %v, want %v", got, want)
			}
		})
	}
}

// firing evaluates rules every minute from 0 to end over series and returns the names of the
// alerts firing at end, sorted. A template that fails to expand fails the test.
func firing(t *testing.T, all []rulefmt.Rule, series map[string]string, end time.Duration) []string {
	t.Helper()
	var load strings.Builder
	load.WriteString("load 1m\n")
	for _, k := range slices.Sorted(maps.Keys(series)) {
		if series[k] != "" {
			load.WriteString("  " + k + " " + series[k] + "\n")
		}
	}
	storage := promqltest.LoadedStorage(t, load.String())
	engine := promqltest.NewTestEngineWithOpts(t, promql.EngineOpts{MaxSamples: 1e6, Timeout: time.Minute, Parser: stockParser})
	query := rules.EngineQueryFunc(engine, storage)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var alerts []*rules.AlertingRule
	for _, r := range all {
		expr, err := stockParser.ParseExpr(r.Expr)
		if err != nil {
			t.Fatal(err)
		}
		alerts = append(alerts, rules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), time.Duration(r.KeepFiringFor),
			labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", true, logger))
	}
	var names []string
	for ts := time.Duration(0); ts <= end; ts += time.Minute {
		for _, a := range alerts {
			if _, err := a.Eval(t.Context(), 0, time.Unix(0, 0).Add(ts), query, nil, 0); err != nil {
				t.Fatalf("evaluate %s at %v: %v", a.Name(), ts, err)
			}
			if ts == end && slices.ContainsFunc(a.ActiveAlerts(), func(x *rules.Alert) bool { return x.State == rules.StateFiring }) {
				names = append(names, a.Name())
			}
		}
	}
	if logs.Len() > 0 {
		t.Errorf("rule evaluation logged problems:\n%s", &logs)
	}
	sort.Strings(names)
	return names
}

// With --sharded every replica reports itself leader (each works on its own keys) and
// serves jsinformer_shard_members: JsinformerSeveralLeaders must not fire for N replicas,
// and still fires for leader-elected runners beside them in another namespace.
func TestSeveralLeadersUnderSharding(t *testing.T) {
	t.Parallel()
	series := healthy()
	for _, pod := range []string{"s1", "s2", "s3"} {
		sharded := `namespace="sharded", pod="` + pod + `"`
		series["jsinformer_ready{"+sharded+"}"] = "1x40"
		series["jsinformer_leader{"+sharded+"}"] = "1x40"
		series["jsinformer_shard_members{"+sharded+"}"] = "3x40"
	}
	if got := firing(t, loadRules(t), series, 40*time.Minute); len(got) != 0 {
		t.Errorf("three sharded replicas, all leading: %v fire, want none", got)
	}
	series[`jsinformer_leader{namespace="ok", pod="p2"}`] = "0x20 1x19"
	if got := firing(t, loadRules(t), series, 40*time.Minute); !slices.Equal(got, []string{"JsinformerSeveralLeaders"}) {
		t.Errorf("two leader-elected runners leading beside sharded ones: %v fire, want JsinformerSeveralLeaders", got)
	}
}
