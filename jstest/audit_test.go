package jstest_test

import (
	"testing"
)

// h.audit: a plugin's audit results as the runner publishes them, after the initial pass and
// after each change.

const sizePolicy = `
export default {
  watch: "v1/configmaps",
  validate(obj, ctx) {
    if (ctx.operation !== "AUDIT") return;
    const size = (obj.data || {}).size;
    if (size === "huge") return { allowed: false, message: obj.metadata.name + " is too big" };
    if (size === "big") return { allowed: true, warnings: ["big"] };
    if (size === "boom") throw new Error("boom");
  },
  admission: { audit: true, mode: "audit", namespaceSelector: { matchExpressions: [{ key: "audit", operator: "NotIn", values: ["off"] }] },
    excludeNamespaces: ["sandbox"] },
};`

// ownerPolicy audits Namespaces: a cluster-scoped resource, in ClusterReports; a Namespace is
// selected by its own labels.
const ownerPolicy = `
export default {
  watch: "v1/namespaces",
  validate(ns) { if (!ns.metadata.labels?.owner) return { allowed: false, message: "no owner" }; },
  admission: { audit: true, failurePolicy: "Ignore", namespaceSelector: { matchLabels: { managed: "yes" } } },
};`

func TestHarnessAudit(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"size.js": sizePolicy, "owner.js": ownerPolicy, "plain.js": `export default { watch: "v1/configmaps", onAdd() {} };`, "h.test.js": `
const cm = (name, size, ns = "prod") => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns }, data: { size } });
const ns = (name, labels) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });

test("the initial pass, then every change", () => {
  const h = harness("./size.js", { objects: [cm("a", "small"), cm("b", "huge"), cm("c", "big"), cm("d", "boom", "dev")] });
  let a = h.audit();
  expect(/^size\.js:9:\d+: .*boom/.test(a.results[0].message) ? "" : a.results[0].message).toBe("");
  a.results[0].message = "(checked)";
  expect(a.results).toEqual([
    { kind: "ConfigMap", namespace: "dev", name: "d", result: "error", message: "(checked)" },
    { kind: "ConfigMap", namespace: "prod", name: "a", result: "pass", message: "" },
    { kind: "ConfigMap", namespace: "prod", name: "b", result: "fail", message: "b is too big" },
    { kind: "ConfigMap", namespace: "prod", name: "c", result: "warn", message: "big" },
  ]);
  expect(a.summary).toEqual({ pass: 1, fail: 1, warn: 1, error: 1, skip: 0 });
  expect(a.reports.map((r) => r.kind + " " + r.metadata.namespace + "/" + r.metadata.name)).toEqual(
    ["Report dev/jsinformer-size-js", "Report prod/jsinformer-size-js"]);
  expect(a.reports[1]).toMatchObject({ apiVersion: "openreports.io/v1alpha1", source: "jsinformer",
    summary: { pass: 1, fail: 1, warn: 1, error: 0, skip: 0 },
    metadata: { labels: { "app.kubernetes.io/managed-by": "jsinformer", "jsinformer.dev/script": "size-js" } } });
  expect(a.reports[1].results[1]).toMatchObject({ policy: "size.js", result: "fail",
    resources: [{ apiVersion: "v1", kind: "ConfigMap", namespace: "prod", name: "b" }] });

  // runner explain shows the same verdict (the harness's engine is the runner's).
  expect(h.explain("v1/configmaps", "prod/b").audit).toMatchObject([{ script: "size.js", result: "fail", message: "b is too big" }]);

  h.update(cm("b", "small"));
  h.delete("v1/configmaps", "prod", "c");
  h.add(cm("e", "huge", "sandbox"));
  a = h.audit();
  expect(a.results.map((r) => r.name + " " + r.result)).toEqual(["d error", "a pass", "b pass"]);
});

test("a namespace relabelled into and out of the selection", () => {
  const h = harness("./size.js", { objects: [ns("team", { audit: "off" }), cm("x", "huge", "team")] });
  expect(h.audit().results).toEqual([]);
  h.update(ns("team", { audit: "on" }));
  expect(h.audit().results).toEqual([{ kind: "ConfigMap", namespace: "team", name: "x", result: "fail", message: "x is too big" }]);
  h.update(ns("team", { audit: "off" }));
  expect(h.audit().results).toEqual([]);
});

test("a cluster-scoped resource: a ClusterReport; a Namespace selected by its own labels", () => {
  const h = harness("./owner.js", { objects: [ns("a", { managed: "yes" }), ns("b", { managed: "yes", owner: "x" }), ns("c")], admission: [] });
  const a = h.audit();
  expect(a.results).toEqual([
    { kind: "Namespace", name: "a", result: "fail", message: "no owner" },
    { kind: "Namespace", name: "b", result: "pass", message: "" },
  ]);
  expect(a.reports.map((r) => r.kind + " " + r.metadata.name + " " + (r.metadata.namespace ?? "-"))).toEqual(["ClusterReport jsinformer-owner-js -"]);
  h.update(ns("c", { managed: "yes", owner: "y" }));
  expect(h.audit().summary).toMatchObject({ pass: 2, fail: 1 });
});

test("another loaded script, and a plugin that does not audit", () => {
  const h = harness("./plain.js", { objects: [cm("a", "huge")], admission: ["./size.js"] });
  expect(h.audit({ script: "./size.js" }).summary.fail).toBe(1);
  expect(() => h.audit()).toThrow("h.audit: plain.js does not audit");
  expect(() => h.audit({ name: "x" })).toThrow("unknown option 'name'");
});
`})
}
