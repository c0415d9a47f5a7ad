// 15 — metrics: the Ready condition of a custom resource as a gauge.
//
// A family with collect is computed at each scrape of the runner's /metrics from ctx.cache,
// as kube-state-metrics does: a deleted Widget leaves no stale series. The collect runs on
// the script's worker under --handler-timeout; a throw leaves this family out of that scrape
// (counted in jsinformer_script_metric_errors_total) and the others are served.
//   widget_ready{namespace="web",name="dial"} 1
export default {
  watch: "example.com/v1/widgets", // examples/crds/widgets.yaml
  metrics: {
    widget_ready: {
      type: "gauge",
      help: "1 when the Widget's Ready condition is True, 0 otherwise",
      labels: ["namespace", "name"],
      collect: (ctx) =>
        ctx.cache.list().map((w) => ({
          labels: { namespace: w.metadata.namespace, name: w.metadata.name },
          value: (w.status?.conditions || []).some((c) => c.type === "Ready" && c.status === "True"),
        })),
    },
  },
};
