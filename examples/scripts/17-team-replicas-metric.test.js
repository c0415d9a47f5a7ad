// Tests of 17-team-replicas-metric.js.
function deployment(name, team, replicas, available) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace: "web", labels: team ? { team } : {} },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
    status: { availableReplicas: available },
  };
}

// { team: value } of one family, for short assertions.
function byTeam(h, family) {
  return Object.fromEntries(h.metrics(family).map((s) => [s.labels.team, s.value]));
}

test("replicas summed per team", () => {
  const h = harness("./17-team-replicas-metric.js", {
    objects: [deployment("a", "payments", 3, 3), deployment("b", "payments", 2, 1), deployment("c", "", 4, 0)],
  });
  expect(byTeam(h, "team_replicas_desired")).toEqual({ payments: 5, unassigned: 4 });
  expect(byTeam(h, "team_replicas_available")).toEqual({ payments: 4, unassigned: 0 });
});

test("a Deployment moving to another team moves its replicas", () => {
  const h = harness("./17-team-replicas-metric.js", { objects: [deployment("a", "payments", 3, 3), deployment("b", "search", 1, 1)] });
  h.patch("apps/v1/deployments", "web", "a", { metadata: { labels: { team: "search" } } });
  expect(byTeam(h, "team_replicas_desired")).toEqual({ search: 4 });
  expect(byTeam(h, "team_replicas_available")).toEqual({ search: 4 });
});
