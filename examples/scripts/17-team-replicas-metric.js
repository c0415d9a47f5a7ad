// 17 — metrics: desired and available replicas per team, summed over the team's Deployments.
//
// Two gauge families computed at scrape time, labelled by the `team` label (lib/labels.js:
// "unassigned" without one). Aggregating in collect keeps the series few (one per team, not
// per object), whatever the number of Deployments. In Prometheus:
//   team_replicas_available / team_replicas_desired < 0.9
import { teamOf } from "./lib/labels.js";

function perTeam(ctx, replicas) {
  const sums = new Map();
  for (const d of ctx.cache.list()) {
    const team = teamOf(d);
    sums.set(team, (sums.get(team) || 0) + replicas(d));
  }
  return [...sums].map(([team, value]) => ({ labels: { team }, value }));
}

export default {
  watch: "apps/v1/deployments",
  metrics: {
    team_replicas_desired: {
      type: "gauge",
      help: "Replicas the team's Deployments ask for (spec.replicas, 1 when unset)",
      labels: ["team"],
      collect: (ctx) => perTeam(ctx, (d) => d.spec.replicas ?? 1),
    },
    team_replicas_available: {
      type: "gauge",
      help: "Available replicas of the team's Deployments (status.availableReplicas)",
      labels: ["team"],
      collect: (ctx) => perTeam(ctx, (d) => d.status?.availableReplicas || 0),
    },
  },
};
