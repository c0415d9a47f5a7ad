// 18 — metrics: a counter a reconcile increments, for what the automation did.
//
// A family without collect lives in the runner; handlers, reconcile and schedules update it
// through ctx.metrics. Here every reconcile of a Deployment counts its outcome, and the ones
// that had to be given the default `team` label are counted per namespace:
//   rate(team_label_reconciles_total{result="labelled"}[5m])
// Counters start from zero when the script is reloaded (Prometheus sees a counter reset).
// Keep label values to a small set: each family has at most --metric-series-limit series.
const DEPLOYMENTS = "apps/v1/deployments";

export default {
  watch: DEPLOYMENTS,
  metrics: {
    team_label_reconciles_total: {
      type: "counter",
      help: "Reconciles of Deployments by outcome: labelled (the default team label was added), unchanged, gone",
      labels: ["result"],
    },
    team_labels_added_total: {
      type: "counter",
      help: "Deployments given the default team label, by namespace",
      labels: ["namespace"],
    },
  },

  reconcile(key, ctx) {
    const [namespace, name] = key.split("/");
    const d = ctx.cache.get(namespace, name);
    if (!d) {
      ctx.metrics.team_label_reconciles_total.inc({ result: "gone" });
      return;
    }
    if (d.metadata.labels?.team) {
      ctx.metrics.team_label_reconciles_total.inc({ result: "unchanged" });
      return;
    }
    k8s.patch(DEPLOYMENTS, namespace, name, { metadata: { labels: { team: "unassigned" } } });
    ctx.metrics.team_label_reconciles_total.inc({ result: "labelled" });
    ctx.metrics.team_labels_added_total.inc({ namespace });
  },
};
