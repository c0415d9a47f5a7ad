// Tests of 25-audit-team-label.js, run offline by `runner test` (see docs/testing.md): h.admit
// for requests, h.audit for the report of what is already there. On a cluster:
// engine/examples_audit_test.go.

function deployment(name, labels) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace: "staging", labels },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
  };
}

test("in audit mode a deployment without a team is admitted, with what would have been said", () => {
  const h = harness("./25-audit-team-label.js");
  const d = h.admit({ operation: "CREATE", object: deployment("api") });
  expect(d).toMatchObject({ allowed: true, outcome: "audited", message: 'deployment api would have no "team" label' });
});

test("a deployment with a team passes", () => {
  const h = harness("./25-audit-team-label.js");
  const d = h.admit({ operation: "CREATE", object: deployment("api", { team: "payments" }) });
  expect(d).toMatchObject({ allowed: true, outcome: "allowed", message: "" });
});

test("the Deployments already in staging are reported: the one without a team fails", () => {
  const h = harness("./25-audit-team-label.js", { objects: [deployment("legacy"), deployment("owned", { team: "payments" })] });
  const a = h.audit();
  expect(a.results).toEqual([
    { kind: "Deployment", namespace: "staging", name: "legacy", result: "fail", message: 'deployment legacy has no "team" label' },
    { kind: "Deployment", namespace: "staging", name: "owned", result: "pass", message: "" },
  ]);
  // The Report the runner writes: `kubectl get report -n staging jsinformer-25-audit-team-label-js -o yaml`.
  expect(a.reports).toHaveLength(1);
  expect(a.reports[0]).toMatchObject({
    apiVersion: "openreports.io/v1alpha1", kind: "Report",
    metadata: { name: "jsinformer-25-audit-team-label-js", namespace: "staging" },
    summary: { pass: 1, fail: 1, warn: 0, error: 0, skip: 0 },
  });
  expect(a.reports[0].results[0]).toMatchObject({ policy: "25-audit-team-label.js", result: "fail",
    resources: [{ apiVersion: "apps/v1", kind: "Deployment", namespace: "staging", name: "legacy" }] });
});

test("the report follows the changes: a fixed Deployment passes, a deleted one goes, a new one is added", () => {
  const h = harness("./25-audit-team-label.js", { objects: [deployment("legacy")] });
  expect(h.audit().summary.fail).toBe(1);
  h.update(deployment("legacy", { team: "search" }));
  expect(h.audit().summary).toMatchObject({ pass: 1, fail: 0 });
  h.add(deployment("late")); // admitted: mode "audit" refuses nothing
  expect(h.audit().results.map((r) => `${r.name} ${r.result}`)).toEqual(["late fail", "legacy pass"]);
  h.delete("apps/v1/deployments", "staging", "legacy");
  expect(h.audit().results.map((r) => r.name)).toEqual(["late"]);
});
