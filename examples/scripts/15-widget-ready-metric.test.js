// Tests of 15-widget-ready-metric.js: h.metrics() scrapes the plugin as Prometheus would.
const WIDGETS = "example.com/v1/widgets";

function widget(name, ready) {
  const w = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name, namespace: "web" }, spec: { size: 1 } };
  if (ready !== undefined) w.status = { conditions: [{ type: "Ready", status: ready ? "True" : "False", reason: "Test" }] };
  return w;
}

test("one series per widget: 1 when Ready, else 0", () => {
  const h = harness("./15-widget-ready-metric.js", {
    objects: ["../crds/widgets.yaml", widget("dial", true), widget("knob", false), widget("new")],
  });
  expect(h.metrics("widget_ready")).toEqual([
    { name: "widget_ready", labels: { namespace: "web", name: "dial" }, value: 1 },
    { name: "widget_ready", labels: { namespace: "web", name: "knob" }, value: 0 },
    { name: "widget_ready", labels: { namespace: "web", name: "new" }, value: 0 },
  ]);
});

test("the series follow the objects: a change shows, a delete leaves nothing stale", () => {
  const h = harness("./15-widget-ready-metric.js", { objects: ["../crds/widgets.yaml", widget("dial", false), widget("knob", true)] });
  const dial = h.get(WIDGETS, "web", "dial");
  dial.status.conditions[0].status = "True";
  h.update(dial); // status goes through the status subresource
  h.delete(WIDGETS, "web", "knob");
  expect(h.metricsText()).toBe(
    "# HELP widget_ready 1 when the Widget's Ready condition is True, 0 otherwise\n" +
      "# TYPE widget_ready gauge\n" +
      'widget_ready{name="dial",namespace="web"} 1\n',
  );
});
