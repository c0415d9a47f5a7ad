// Tests of 25-audit-team-label.js, run offline by `runner test` (see docs/testing.md). The
// audit itself (the reports) runs in a runner against a cluster: engine/examples_audit_test.go.

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
