package jstest_test

import "testing"

// TestHarnessMetrics: h.metrics() and h.metricsText() scrape the plugin as /metrics would:
// collects run at the call, handler-updated families (a histogram flattened into its
// exposition samples) follow the handlers, and a family whose collect throws is left out
// while the others are served.
func TestHarnessMetrics(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": `
export default {
  watch: "v1/configmaps",
  metrics: {
    cm_count: { type: "gauge", help: "ConfigMaps", collect: (ctx) => [{ value: ctx.cache.list().length }] },
    cm_broken: { type: "gauge", help: "always throws", collect: () => { throw new Error("no"); } },
    cm_keys: { type: "histogram", help: "data keys per ConfigMap", labels: ["namespace"], buckets: [1, 5] },
  },
  onAdd(cm, ctx) { ctx.metrics.cm_keys.observe(Object.keys(cm.data || {}).length, { namespace: cm.metadata.namespace }); },
};`, "h.test.js": `
const cm = (name, data) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "web" }, data });

test("samples", () => {
  const h = harness("./p.js", { objects: [cm("a", { x: "1" })] });
  h.add(cm("b", { x: "1", y: "2", z: "3", u: "4", v: "5", w: "6" }));
  expect(h.metrics("cm_count")).toEqual([{ name: "cm_count", labels: {}, value: 2 }]);
  expect(h.metrics("cm_broken")).toEqual([]);
  expect(h.metrics("cm_keys").map((s) => [s.name, s.labels.le, s.value])).toEqual([
    ["cm_keys_bucket", "1", 1], ["cm_keys_bucket", "5", 1], ["cm_keys_bucket", "+Inf", 2],
    ["cm_keys_sum", undefined, 7], ["cm_keys_count", undefined, 2],
  ]);
  expect(h.metrics().map((s) => s.name)).toContain("cm_count");
});

test("text", () => {
  const h = harness("./p.js", { objects: [cm("a", {})] });
  expect(h.metricsText()).toContain("# TYPE cm_count gauge\ncm_count 1\n");
  expect(h.metricsText()).toContain('cm_keys_bucket{namespace="web",le="1"} 1\n');
  expect(h.metricsText().includes("cm_broken")).toBe(false);
});

test("bad argument", () => {
  const h = harness("./p.js");
  expect(() => h.metrics(5)).toThrow("h.metrics(name): name must be a metric name");
});
`})
}
