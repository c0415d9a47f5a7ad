// Tests of 22-default-security-context.js, run offline by `runner test` (see docs/testing.md).
const DEPLOYMENTS = "apps/v1/deployments";

function deployment(name, pod = {}) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace: "prod", labels: { team: "payments" } }, // example 21 requires a team in prod
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }], ...pod } },
    },
  };
}

test("the defaults are filled in, as a JSON Patch", () => {
  const h = harness("./22-default-security-context.js");
  const d = h.admit({ operation: "CREATE", object: deployment("api") });
  expect(d).toMatchObject({ allowed: true, outcome: "allowed" });
  const byPath = [...d.patch].sort((a, b) => (a.path < b.path ? -1 : 1));
  expect(byPath).toEqual([
    { op: "add", path: "/spec/template/spec/containers/0/securityContext", value: { allowPrivilegeEscalation: false } },
    { op: "add", path: "/spec/template/spec/securityContext", value: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } } },
  ]);
});

test("a created deployment is stored as the mutation left it", () => {
  const h = harness("./22-default-security-context.js");
  const stored = h.add(deployment("api"));
  expect(stored.spec.template.spec.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
  expect(h.get(DEPLOYMENTS, "prod", "api").spec.template.spec.containers[0].securityContext).toEqual({ allowPrivilegeEscalation: false });
});

test("what a deployment sets itself is kept, and a complete one is not patched", () => {
  const h = harness("./22-default-security-context.js");
  const own = deployment("root", { securityContext: { runAsUser: 0 } });
  own.spec.template.spec.containers[0].securityContext = { allowPrivilegeEscalation: true };
  expect(h.admit({ operation: "CREATE", object: own }).patch).toBeNull();
  const stored = h.add(deployment("api"));
  expect(h.admit({ operation: "UPDATE", object: stored }).patch).toBeNull();
});

test("the team policy of example 21 still decides after the mutation", () => {
  const h = harness("./22-default-security-context.js");
  const unlabelled = deployment("api");
  delete unlabelled.metadata.labels;
  const d = h.admit({ operation: "CREATE", object: unlabelled });
  expect(d.decisions.map((x) => `${x.script} ${x.webhook} ${x.outcome}`)).toEqual([
    "22-default-security-context.js mutate allowed",
    "21-require-team-label.js validate denied",
    "24-audit-latest-images.js validate allowed",
  ]);
  expect(d.allowed).toBe(false);
});
