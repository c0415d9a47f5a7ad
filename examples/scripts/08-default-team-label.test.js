// Tests of 08-default-team-label.js, run offline by `runner test` (see docs/testing.md).
const DEPLOYMENTS = "apps/v1/deployments";

function deployment(namespace, name, labels = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace, labels },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
  };
}

test("labels new deployments", () => {
  const h = harness("./08-default-team-label.js", { objects: [deployment("web", "api")] });
  h.add(deployment("web", "worker"));
  h.settle();
  expect(h.get(DEPLOYMENTS, "web", "worker").metadata.labels.team).toBe("unassigned");
  expect(h.writes.map((w) => `${w.verb} ${w.name}`)).toEqual(["patch api", "patch worker"]);
});

test("existing deployments are labelled at start-up", () => {
  const h = harness("./08-default-team-label.js", { objects: [deployment("web", "api"), deployment("ops", "db")] });
  expect(h.list(DEPLOYMENTS).map((d) => d.metadata.labels.team)).toEqual(["unassigned", "unassigned"]);
  expect(h.logs).toHaveLength(2);
  expect(h.logs[0]).toMatchObject({ level: "info", message: "labelled deployment", team: "unassigned" });
});

test("a deployment with a team is left alone", () => {
  const h = harness("./08-default-team-label.js", { objects: [deployment("web", "api", { team: "payments" })] });
  h.add(deployment("web", "billing", { team: "payments" }));
  expect(h.writes).toHaveLength(0);
  expect(h.get(DEPLOYMENTS, "web", "billing").metadata.labels.team).toBe("payments");
});

test("the patch is conditional on the version the script saw", () => {
  const h = harness("./08-default-team-label.js");
  h.add(deployment("web", "api"));
  const patch = h.writes[0];
  expect(patch).toMatchObject({ verb: "patch", resource: DEPLOYMENTS, namespace: "web", patchType: "merge" });
  expect(patch.body.metadata.resourceVersion).toBeDefined();
  expect(patch.error).toBeUndefined();
});

test("removing the label puts it back", () => {
  const h = harness("./08-default-team-label.js", { objects: [deployment("web", "api")] });
  const d = h.get(DEPLOYMENTS, "web", "api");
  delete d.metadata.labels.team;
  h.update(d);
  expect(h.get(DEPLOYMENTS, "web", "api").metadata.labels).toEqual({ team: "unassigned" });
  expect(h.errors).toEqual([]);
});
