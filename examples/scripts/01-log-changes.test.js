// Tests of 01-log-changes.js, run offline by `runner test` (see docs/testing.md).
const DEPLOYMENTS = "apps/v1/deployments";

function deployment(namespace, name, replicas = 1) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
  };
}

const messages = (h) => h.logs.map((l) => l.message);

test("existing deployments are logged as such at start-up", () => {
  const h = harness("./01-log-changes.js", { objects: [deployment("web", "api", 2)] });
  expect(h.logs).toEqual([{ level: "info", message: "existing deployment", name: "web/api", replicas: 2 }]);
});

test("a new deployment is logged as created", () => {
  const h = harness("./01-log-changes.js");
  h.add(deployment("web", "api", 3));
  expect(h.logs).toEqual([{ level: "info", message: "deployment created", name: "web/api", replicas: 3 }]);
});

test("a change is logged with what changed", () => {
  const h = harness("./01-log-changes.js", { objects: [deployment("web", "api", 1)] });
  h.patch(DEPLOYMENTS, "web", "api", { spec: { replicas: 3 } });
  expect(messages(h)).toEqual(["existing deployment", "deployment changed"]);
  expect(h.logs[1].changes).toBe("spec.replicas: 1 -> 3");
});

test("a status-only change is not logged", () => {
  const h = harness("./01-log-changes.js", { objects: [deployment("web", "api")] });
  const d = h.get(DEPLOYMENTS, "web", "api");
  d.status = { replicas: 1, readyReplicas: 1 };
  h.update(d);
  expect(h.get(DEPLOYMENTS, "web", "api").status.readyReplicas).toBe(1);
  expect(messages(h)).toEqual(["existing deployment"]);
});

test("a deletion is logged", () => {
  const h = harness("./01-log-changes.js", { objects: [deployment("web", "api")] });
  h.delete(DEPLOYMENTS, "web", "api");
  expect(h.logs[1]).toEqual({ level: "info", message: "deployment deleted", name: "web/api", finalStateUnknown: false });
  expect(h.get(DEPLOYMENTS, "web", "api")).toBeNull();
});

test("the script never writes", () => {
  const h = harness("./01-log-changes.js", { objects: [deployment("web", "api")] });
  h.patch(DEPLOYMENTS, "web", "api", { metadata: { labels: { tier: "fe" } } });
  h.delete(DEPLOYMENTS, "web", "api");
  expect(h.writes).toEqual([]);
  expect(h.errors).toEqual([]);
});
