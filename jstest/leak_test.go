package jstest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A test file's harnesses are closed with their tests: every goroutine an engine, its
// informers and the in-memory cluster's watches started has returned when RunFile does, the
// goroutine of a fetch request still held on the virtual clock included.
// Not parallel: the parallel tests of the package are paused while it runs.
func TestRunFileLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	res := runFile(t, "h.test.js", map[string]string{
		"p.js": `export default { watch: "v1/configmaps", indexers: { byName: (o) => o.metadata.name },
  onAdd() {}, reconcile() { return { requeueAfter: "1m" }; } };`,
		"h.test.js": `
test("one", () => {
  const h = harness("./p.js", { objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }] });
  h.advance("5m");
});
test("two", () => { harness("./p.js"); expect(1).toBe(2); });
test("a request still held at the end", () => {
  const h = harness("./q.js");
  h.http.route("GET", "*", () => ({ delay: Infinity }));
  h.add({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } });
  h.advance("1s");
});
`,
		"q.js": `export default { watch: "v1/configmaps", async onAdd() { await fetch("https://api.example.invalid/"); } };`,
	})
	if len(res.Tests) != 3 || res.Tests[0].Status != "passed" || res.Tests[1].Status != "failed" || res.Tests[2].Status != "passed" {
		t.Fatalf("results %+v", res)
	}
}
