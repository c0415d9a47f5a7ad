// Tests of 10-team-deployments.js (and its module lib/labels.js), run offline by `runner test`.
const DEPLOYMENTS = "apps/v1/deployments";

function deployment(namespace, name, team) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace, labels: team ? { team } : {} },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
  };
}

test("a new deployment reports its team's deployments, from the index", () => {
  const h = harness("./10-team-deployments.js", { objects: [deployment("web", "api", "payments")] });
  expect(h.logs).toHaveLength(0); // the initial list reports nothing
  h.add(deployment("web", "billing", "payments"));
  expect(h.logs).toEqual([{ level: "info", message: "team deployments", team: "payments", count: 2, deployments: "web/api,web/billing" }]);
});

test("moving a deployment reports both teams; deleting it reports its team", () => {
  const h = harness("./10-team-deployments.js", { objects: [deployment("web", "api", "payments"), deployment("web", "db")] });
  const d = h.get(DEPLOYMENTS, "web", "db");
  d.metadata.labels = { ...(d.metadata.labels || {}), team: "payments" };
  h.update(d);
  h.delete(h.get(DEPLOYMENTS, "web", "api"));
  expect(h.logs.map((l) => `${l.team} ${l.deployments}`)).toEqual([
    "unassigned ",
    "payments web/api,web/db",
    "payments web/db",
  ]);
});
