// Tests of 21-require-team-label.js, run offline by `runner test` (see docs/testing.md). The
// harness also loads the folder's other admission scripts (22, 23, 24), as the API server would
// call all of their webhooks.
const DEPLOYMENTS = "apps/v1/deployments";

function deployment(namespace, name, labels) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace, labels },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
  };
}

test("a deployment without a team is denied, with the message kubectl prints", () => {
  const h = harness("./21-require-team-label.js");
  const d = h.admit({ operation: "CREATE", object: deployment("prod", "api") });
  expect(d).toMatchObject({ allowed: false, code: 403, outcome: "denied",
    message: 'deployment api needs a "team" label: who is on call for it?' });
});

test("a denied create throws the API server's error and stores nothing", () => {
  const h = harness("./21-require-team-label.js");
  let caught;
  try { h.add(deployment("prod", "api")); } catch (e) { caught = e; }
  expect(caught).toMatchObject({ code: 403, reason: "Forbidden" });
  expect(caught.message).toContain('validate.jsinformer.io" denied the request: deployment api needs a "team" label');
  expect(h.get(DEPLOYMENTS, "prod", "api")).toBeNull();
});

test("an update that drops the label is denied too", () => {
  const h = harness("./21-require-team-label.js");
  const stored = h.add(deployment("prod", "api", { team: "payments" }));
  delete stored.metadata.labels.team;
  expect(h.admit({ operation: "UPDATE", object: stored }).allowed).toBe(false);
});

test("team unassigned is admitted with a warning", () => {
  const h = harness("./21-require-team-label.js");
  const d = h.admit({ operation: "CREATE", object: deployment("prod", "api", { team: "unassigned" }) });
  expect(d.allowed).toBe(true);
  expect(d.warnings).toEqual(['deployment api has team "unassigned": claim it']);
});

test("other namespaces are not its business", () => {
  const h = harness("./21-require-team-label.js");
  const d = h.admit({ operation: "CREATE", object: deployment("web", "api"), script: "./21-require-team-label.js" });
  expect(d.decisions).toEqual([]);
  h.add(deployment("web", "api"));
  expect(h.get(DEPLOYMENTS, "web", "api")).not.toBeNull();
});
