package jstest_test

import "testing"

// TestHarnessStore: harness()'s store option seeds the plugin's ctx.store before its initial
// list, h.store reads and changes it with the runner's versions and conflicts, and TTLs follow
// the virtual clock.
func TestHarnessStore(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": `
export default {
  watch: "v1/configmaps",
  onAdd(cm, ctx) {
    const e = ctx.store.get("seen");
    ctx.store.set("seen", e.value.concat(cm.metadata.name), { version: e.version });
    ctx.store.set("last", cm.metadata.name, { ttl: "1h" });
  },
};`, "h.test.js": `
const cm = (name) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "web" } });

test("seeded, read and changed", () => {
  const h = harness("./p.js", { objects: [cm("a")], store: { seen: ["before"] } });
  h.add(cm("b"));
  expect(h.store.get("seen").value).toEqual(["before", "a", "b"]);
  const v = h.store.get("seen").version;
  expect(h.store.set("seen", [], { version: v })).toBeGreaterThan(v);
  expect(() => h.store.set("seen", [], { version: v })).toThrow("version conflict");
  expect(h.store.list().map((e) => e.key)).toEqual(["last", "seen"]);
  expect(h.store.delete("seen")).toBe(true);
});

test("ttl on the virtual clock", () => {
  const h = harness("./p.js", { objects: [cm("a")], store: { seen: [] } });
  expect(h.store.get("last").value).toBe("a");
  h.advance("2h");
  expect(h.store.get("last")).toBe(null);
});

test("empty without the option", () => {
  const h = harness("./p.js");
  expect(h.store.list()).toEqual([]);
});
`})
}
