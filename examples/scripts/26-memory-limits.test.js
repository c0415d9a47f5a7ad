// Tests of 26-memory-limits.js, run offline by `runner test` (see docs/testing.md): h.admit for
// the requests it refuses, h.audit for what it reports of the Deployments already there.
// On a cluster: engine/examples_audit_test.go.
const DEPLOYMENTS = "apps/v1/deployments";
const OPT_IN = { "policy.example.com/memory-limits": "required" };

function namespace(name, labels) {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } };
}

function deployment(ns, name, memory) {
  const resources = memory ? { limits: { memory } } : {};
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace: ns },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27", resources }] } },
    },
  };
}

// A cluster where shop opted in, sandbox too but is excluded, and dev did not.
const existing = [
  namespace("shop", OPT_IN), namespace("sandbox", OPT_IN), namespace("dev"),
  deployment("shop", "legacy"), deployment("shop", "api", "256Mi"), deployment("sandbox", "toy"), deployment("dev", "scratch"),
];

test("the Deployments already there are reported, in the namespaces that opted in only", () => {
  const h = harness("./26-memory-limits.js", { objects: existing });
  const a = h.audit();
  expect(a.results).toEqual([
    { kind: "Deployment", namespace: "shop", name: "api", result: "pass", message: "" },
    { kind: "Deployment", namespace: "shop", name: "legacy", result: "fail",
      message: "deployment legacy runs containers without a memory limit: main" },
  ]);
  expect(a.reports.map((r) => `${r.kind} ${r.metadata.namespace}/${r.metadata.name}`)).toEqual(["Report shop/jsinformer-26-memory-limits-js"]);
  expect(a.reports[0].summary).toEqual({ pass: 1, fail: 1, warn: 0, error: 0, skip: 0 });
});

test("a new Deployment without a limit is refused where it is enforced, admitted elsewhere", () => {
  const h = harness("./26-memory-limits.js", { objects: existing });
  expect(h.admit({ operation: "CREATE", object: deployment("shop", "new") })).toMatchObject({ allowed: false, code: 403,
    message: "deployment new would run containers without a memory limit: main" });
  // Elsewhere its webhook is not even called (the folder's other policies may be).
  const asked = (ns) => h.admit({ operation: "CREATE", object: deployment(ns, "new") }).decisions.map((d) => d.script);
  expect(asked("dev")).not.toContain("26-memory-limits.js");
  expect(asked("sandbox")).not.toContain("26-memory-limits.js");
});

test("fixing an old Deployment turns its result to pass; deleting it removes it", () => {
  const h = harness("./26-memory-limits.js", { objects: existing });
  h.update(deployment("shop", "legacy", "128Mi"));
  expect(h.audit().summary).toMatchObject({ pass: 2, fail: 0 });
  h.delete(DEPLOYMENTS, "shop", "legacy");
  expect(h.audit().results.map((r) => r.name)).toEqual(["api"]);
});

test("a namespace that opts in is audited at once", () => {
  const h = harness("./26-memory-limits.js", { objects: existing });
  h.update(namespace("dev", OPT_IN));
  expect(h.audit().results.filter((r) => r.namespace === "dev")).toEqual([
    { kind: "Deployment", namespace: "dev", name: "scratch", result: "fail",
      message: "deployment scratch runs containers without a memory limit: main" },
  ]);
});
