package jstest_test

import "testing"

// h.explain shows what runner explain shows, inside `runner test`.
func TestHarnessExplain(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": throwing, "sel.js": `
export default {
  watch: { resource: "v1/configmaps", labelSelector: "app=web" },
  onAdd(cm) { console.log("web", cm.metadata.name); },
};`, "h.test.js": `
const cm = (name, labels) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default", labels } });

test("a throwing handler and a write", () => {
  const h = harness("./p.js");
  h.add(cm("bad"));
  h.add(cm("good"));
  const bad = h.explain("cm", "default/bad");
  expect(bad.exists).toBe(true);
  expect(bad.deliveries).toHaveLength(1);
  expect(bad.deliveries[0]).toMatchObject({ script: "p.js", delivered: true, cached: true });
  expect(bad.records).toHaveLength(1);
  expect(bad.records[0]).toMatchObject({ event: "add", handler: "onAdd", result: "error" });
  expect(bad.records[0].error).toContain("cannot handle bad");
  expect(String(bad)).toContain("cannot handle bad");
  const good = h.explain("configmaps", "default/good");
  expect(good.records[0].writes).toHaveLength(1);
  expect(good.records[0].writes[0]).toMatchObject({ verb: "create", resource: "v1/configmaps", code: 201 });
});

test("a selector that excludes the object", () => {
  const h = harness("./sel.js");
  h.add(cm("db", { app: "db" }));
  const x = h.explain("cm", "default/db");
  expect(x.deliveries[0]).toMatchObject({ delivered: false, reason: "selector", cached: false });
  expect(x.records).toHaveLength(0);
  expect(x.text).toContain("selector");
});

test("bad input throws", () => {
  const h = harness("./sel.js");
  expect(() => h.explain("cm", "nameonly")).toThrow("NAMESPACE/NAME");
});
`})
}
