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

// TestHarnessSharedStore: a plugin's ctx.store.shared(name) in the harness is the namespace
// h.store.shared(name) seeds and reads, apart from the plugin's own store.
func TestHarnessSharedStore(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"q.js": `
export default {
  watch: "v1/configmaps",
  store: { shared: ["team-a"], readable: ["quota/"] },
  onAdd(cm, ctx) {
    const team = ctx.store.shared("team-a");
    team.set("seen/" + cm.metadata.name, team.get("quota/web").value);
  },
};`, "h.test.js": `
const cm = (name) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "web" } });

test("shared namespace", () => {
  const h = harness("./q.js");
  h.store.shared("team-a").set("quota/web", 3);
  h.add(cm("a"));
  expect(h.store.shared("team-a").get("seen/a").value).toBe(3);
  expect(h.store.shared("team-a").name).toBe("team-a");
  expect(h.store.list()).toEqual([]);
  expect(() => h.store.shared("Bad_Name")).toThrow("RFC 1123 label");
});
`})
}
