package jstest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A test file's harnesses are closed with their tests: every goroutine an engine, its
// informers and the in-memory cluster's watches started has returned when RunFile does.
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
`})
	if len(res.Tests) != 2 || res.Tests[0].Status != "passed" || res.Tests[1].Status != "failed" {
		t.Fatalf("results %+v", res)
	}
}
