package jstest_test

import "testing"

// h.add takes what harness({objects}) takes: a path of a YAML file adds each of its
// documents in order (List kinds expanded), each seen by the plugin as a new add, and returns
// the stored objects; a file that does not exist fails the call.
func TestAddAcceptsFixtureFiles(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{
		"p.js": `export default { watch: "v1/configmaps", onAdd(cm, ctx) { log.info("add", { name: cm.metadata.name, initial: ctx.isInInitialList }); } };`,
		"more.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: web}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: web}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
`,
		"h.test.js": `
test("a file", () => {
  const h = harness("./p.js");
  const added = h.add("more.yaml");
  expect(added.map((o) => o.metadata.namespace + "/" + o.metadata.name)).toEqual(["web/a", "web/b", "default/c"]);
  expect(added[0].metadata.resourceVersion).toBeDefined();
  expect(h.logs.map((l) => [l.name, l.initial])).toEqual([["a", false], ["b", false], ["c", false]]);
  expect(h.get("v1/configmaps", "web", "b")).not.toBeNull();
});

test("an object, as before", () => {
  const h = harness("./p.js");
  expect(h.add({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }).metadata.namespace).toBe("default");
});

test("a missing file", () => {
  const h = harness("./p.js");
  expect(() => h.add("nope.yaml")).toThrow("h.add: ");
});
`})
}
