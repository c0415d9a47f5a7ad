// Tests of 18-reconcile-counter.js.
function deployment(namespace, name, labels = {}) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace, labels },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
  };
}

test("each reconcile counts its outcome", () => {
  const h = harness("./18-reconcile-counter.js", {
    objects: [deployment("web", "a"), deployment("web", "b", { team: "search" }), deployment("ops", "c")],
  });
  expect(h.get("apps/v1/deployments", "web", "a").metadata.labels.team).toBe("unassigned");
  expect(h.metrics("team_labels_added_total")).toEqual([
    { name: "team_labels_added_total", labels: { namespace: "ops" }, value: 1 },
    { name: "team_labels_added_total", labels: { namespace: "web" }, value: 1 },
  ]);
  // The patches the reconcile sent come back as updates, reconciled again: unchanged now.
  const outcomes = Object.fromEntries(h.metrics("team_label_reconciles_total").map((s) => [s.labels.result, s.value]));
  expect(outcomes.labelled).toBe(2);
  expect(outcomes.unchanged).toBeGreaterThan(2);
  h.delete("apps/v1/deployments", "web", "b");
  expect(h.metrics("team_label_reconciles_total").find((s) => s.labels.result === "gone").value).toBe(1);
});

test("the exposition, as Prometheus reads it", () => {
  const h = harness("./18-reconcile-counter.js", { objects: [deployment("web", "a")] });
  expect(h.metricsText()).toContain('team_labels_added_total{namespace="web"} 1\n');
  expect(h.metricsText()).toContain("# TYPE team_label_reconciles_total counter\n");
});
