package engine_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jsinformer/jsinformer/engine"
)

// The metrics examples on the real control plane: their families served by the runner's
// registry follow the objects.

func TestExample15WidgetReadyMetric(t *testing.T) {
	t.Parallel()
	pre := startEngine(t, nil, nil)
	applyWidgetCRD(t, pre)
	reg := prometheus.NewRegistry()
	r := startEngine(t, example(t, "15-widget-ready-metric.js"), func(c *engine.Config) { asGenerated(t)(c); c.Registerer = reg })
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex15"))
	r.create(t, widgetsGVR, map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "dial", "namespace": ns}, "spec": map[string]any{"size": int64(1)}})
	key := "name=dial,namespace=" + ns
	waitSeries(t, reg, "widget_ready", "a new widget is not ready", func(s map[string]float64) bool { v, ok := s[key]; return ok && v == 0 })
	w := r.mustFetch(t, widgetsGVR, ns, "dial")
	w.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Test"}}}
	if _, err := r.dyn.Resource(widgetsGVR).Namespace(ns).UpdateStatus(t.Context(), w, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSeries(t, reg, "widget_ready", "Ready after its status says so", func(s map[string]float64) bool { return s[key] == 1 })
	r.delete(t, widgetsGVR, ns, "dial")
	waitSeries(t, reg, "widget_ready", "no series once deleted", func(s map[string]float64) bool { _, ok := s[key]; return !ok })
}

func TestExample17TeamReplicasMetric(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	r := startEngine(t, examples(t, "17-team-replicas-metric.js", "lib/labels.js"), func(c *engine.Config) { asGenerated(t)(c); c.Registerer = reg })
	defer r.checkGranted(t)
	ns := r.namespace(t, uniqueName("ex17"))
	team := ns // a team of this test's own: other tests' Deployments are "unassigned"
	for _, d := range []struct {
		name     string
		replicas int64
	}{{"a", 2}, {"b", 3}} {
		obj := deployment(ns, d.name, "nginx", d.replicas)
		obj["metadata"].(map[string]any)["labels"] = map[string]any{"team": team}
		r.create(t, deploymentsGVR, obj)
	}
	waitSeriesLogged(t, reg, r, "team_replicas_desired", "the team's sum", func(s map[string]float64) bool { return s["team="+team] == 5 })
	// Without a controller-manager nothing becomes available.
	waitSeries(t, reg, "team_replicas_available", "nothing available", func(s map[string]float64) bool { v, ok := s["team="+team]; return ok && v == 0 })
	r.delete(t, deploymentsGVR, ns, "b")
	waitSeries(t, reg, "team_replicas_desired", "after a delete", func(s map[string]float64) bool { return s["team="+team] == 2 })
}
