package jstest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/jstest"
)

// The harness, through test files: each test file asserts in JS; here every test must pass.

func allPass(t *testing.T, files map[string]string) jstest.FileResult {
	t.Helper()
	res := runFile(t, "h.test.js", files)
	if res.Error != "" {
		t.Fatalf("file error: %s", res.Error)
	}
	for _, tr := range res.Tests {
		if tr.Status != jstest.Passed {
			t.Errorf("%s: %s", tr.Name, tr.Failure)
		}
	}
	return res
}

const throwing = `
export default {
  watch: "v1/configmaps",
  onAdd(cm) {
    if (cm.metadata.name === "bad") throw new Error("cannot handle " + cm.metadata.name);
    if (cm.metadata.generateName) return; // a copy
    k8s.create("v1/configmaps", { apiVersion: "v1", kind: "ConfigMap",
      metadata: { generateName: cm.metadata.name + "-copy-", namespace: cm.metadata.namespace } });
  },
};`

func TestHarnessRecordsWritesAndErrors(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": throwing, "h.test.js": `
const cm = (name, ns = "default") => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns } });

test("writes", () => {
  const h = harness("./p.js", { objects: [cm("a", "team")] });
  expect(h.writes).toHaveLength(1);
  const w = h.writes[0];
  expect(w).toMatchObject({ verb: "create", resource: "v1/configmaps", namespace: "team", dryRun: false });
  expect(w.name).toContain("a-copy-");
  expect(h.list("configmaps", { namespace: "team" })).toHaveLength(2);
});

test("dry run", () => {
  const h = harness("./p.js", { objects: [cm("a")], flags: { dryRun: true } });
  expect(h.writes[0].dryRun).toBe(true);
  expect(h.list("v1/configmaps", { namespace: "default" })).toHaveLength(1);
});

test("errors", () => {
  const h = harness("./p.js");
  h.add(cm("bad"));
  expect(h.errors).toHaveLength(1);
  expect(h.errors[0]).toMatchObject({ handler: "onAdd", object: "default/bad", resource: "v1/configmaps", level: "error" });
  expect(h.errors[0].error).toBe("p.js:5:43: Error: cannot handle bad");
});

test("api errors thrown at the test carry code and reason", () => {
  const h = harness("./p.js");
  let caught;
  try { h.update(cm("missing")); } catch (e) { caught = e; }
  expect(caught).toMatchObject({ code: 404, reason: "NotFound" });
});
`})
}

func TestHarnessLoadErrors(t *testing.T) {
	t.Parallel()
	res := runFile(t, "h.test.js", map[string]string{
		"p.js":      "export default {\n  watch: \"v1/configmaps\",\n  onAdd: 5,\n};",
		"h.test.js": "test(\"load\", () => {\n  harness(\"./p.js\");\n});\ntest(\"option\", () => {\n  harness(\"./p.js\", { object: [] });\n});",
	})
	got := []string{res.Tests[0].Failure.String(), res.Tests[1].Failure.String()}
	want := []string{"h.test.js:2:3: Error: harness: ./p.js not loaded: p.js:3: 'onAdd' must be a function, got a number (5)",
		"h.test.js:5:3: Error: harness: unknown option 'object' (valid: objects, flags, now, http, admission, store)"}
	for i := range want {
		if !strings.HasSuffix(got[i], want[i]) {
			t.Errorf("failure %q, want it to end with %q", got[i], want[i])
		}
	}
}

func TestHarnessFixturesAndFlags(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{
		"p.js": `export default { onAdd(obj, ctx) { log.info("add", { resource: ctx.resource, name: obj.metadata.name }); } };`,
		"fixtures.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: one, namespace: ns1}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: two, namespace: ns1}}
- {apiVersion: v1, kind: Secret, metadata: {name: three, namespace: ns2}}
`,
		"h.test.js": `
test("fixture files, and --gvr for a plugin without watch", () => {
  const h = harness("./p.js", { objects: ["fixtures.yaml"], flags: { gvr: ["cm", "secrets"], namespace: "ns1" } });
  expect(h.logs.map((l) => l.resource + " " + l.name)).toEqual(["v1/configmaps one", "v1/configmaps two"]);
  expect(h.get("v1/secrets", "ns2", "three")).not.toBeNull();
  expect(h.get("v1/namespaces", "", "ns2").status.phase).toBe("Active");
});
`})
}

// A file with a hundred events runs in well under a second: measured here, bounded loosely
// (the machine is shared); docs/benchmarks.md has the figure.
func TestHundredEventsAreFast(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := allPass(t, map[string]string{
		"p.js": `export default { watch: "v1/configmaps", onAdd(cm) { log.info("add"); }, onUpdate() {}, onDelete() {} };`,
		"h.test.js": fmt.Sprintf(`
test("a hundred events", () => {
  const h = harness("./p.js");
  for (let i = 0; i < %d; i++) {
    h.add({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" + i, namespace: "default" } });
  }
  h.settle();
  expect(h.logs).toHaveLength(%d);
});
`, 100, 100)})
	took := time.Since(start)
	t.Logf("a test file with 100 adds, each delivered and handled: %s (test %.1fms)", took, res.Tests[0].DurationMS)
	if took > 10*time.Second {
		t.Fatalf("took %s", took)
	}
}

// A watch the cluster refuses fails the harness at once, with the server's reason, rather
// than after the sync timeout.
func TestHarnessFailsOnARefusedWatch(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := runFile(t, "h.test.js", map[string]string{
		"p.js":      `export default { watch: { resource: "v1/configmaps", fieldSelector: "data.x=1" }, onAdd() {} };`,
		"h.test.js": `test("refused", () => { harness("./p.js"); });`,
	})
	f := res.Tests[0].Failure
	if f == nil || !strings.Contains(f.Message, `"data.x" is not a known field selector`) || time.Since(start) > 10*time.Second {
		t.Fatalf("failure %v after %s", f, time.Since(start))
	}
}

// console and log both reach h.logs; k8s.event is a create of v1/events stamped with the
// virtual clock.
func TestHarnessLogsAndEvents(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{
		"p.js": `export default { watch: "v1/configmaps", onAdd(cm) {
  console.warn("seen", cm.metadata.name);
  log.info("fields", { n: 1, list: [1, 2] });
  k8s.event(cm, "Normal", "Seen", "seen it");
} };`,
		"h.test.js": `
test("logs and events", () => {
  const h = harness("./p.js", { objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }], now: "2031-02-03T04:05:06Z" });
  expect(h.logs).toEqual([
    { level: "warn", message: "seen a" },
    { level: "info", message: "fields", n: 1, list: [1, 2] },
  ]);
  expect(h.writes).toHaveLength(1);
  expect(h.writes[0]).toMatchObject({ verb: "create", resource: "v1/events", namespace: "default" });
  expect(h.writes[0].error).toBeUndefined();
  const events = h.list("v1/events", { namespace: "default" });
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ reason: "Seen", lastTimestamp: "2031-02-03T04:05:06Z", involvedObject: { name: "a" } });
});
`})
}

// A plugin whose every write causes another never settles: the test fails with a message
// that says so, instead of hanging.
func TestHarnessReportsAWriteLoop(t *testing.T) {
	t.Parallel()
	res := runFileWith(t, jstest.Options{QuietTimeout: time.Second}, "h.test.js", map[string]string{
		"p.js": `export default { watch: "v1/configmaps", onUpdate(o, cm) {
  k8s.patch("v1/configmaps", cm.metadata.namespace, cm.metadata.name, { data: { n: String(Number(cm.data.n) + 1) } });
} };`,
		"h.test.js": `test("loop", () => {
  const h = harness("./p.js", { objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { n: "0" } }] });
  h.patch("v1/configmaps", "default", "a", { data: { n: "1" } });
});`,
	})
	f := res.Tests[0].Failure
	if f == nil || !strings.Contains(f.Message, "does each of its writes cause another?") || f.Line != 3 {
		t.Fatalf("failure %v", f)
	}
}
