// Tests of 09-require-labels.js (and its module lib/labels.js), run offline by `runner test`.
const DEPLOYMENTS = "apps/v1/deployments";

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

test("reports the labels a deployment lacks", () => {
  const h = harness("./09-require-labels.js");
  h.add(deployment("web", "api", { team: "payments" }));
  expect(h.logs).toEqual([{ level: "warn", message: "missing labels", deployment: "web/api", missing: "app.kubernetes.io/name" }]);
});

test("says so when the labels become complete, and nothing for a change that keeps them", () => {
  const h = harness("./09-require-labels.js", { objects: [deployment("web", "api")] });
  const d = h.get(DEPLOYMENTS, "web", "api");
  d.metadata.labels = { team: "payments", "app.kubernetes.io/name": "api" };
  h.update(d);
  const again = h.get(DEPLOYMENTS, "web", "api");
  again.metadata.labels.extra = "x";
  h.update(again);
  expect(h.logs.map((l) => l.message)).toEqual(["missing labels", "labels complete"]);
});
