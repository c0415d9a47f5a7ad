package jstest_test

import "testing"

// A policy written for CREATE that reads obj.metadata, registered for DELETE too: under Fail
// it denies the delete, and the denial names the cause (obj is null on DELETE) and the fix.
func TestAdmitDeleteNamesNullObj(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"policy.js": `
export default {
  watch: { resource: "v1/configmaps", namespace: "prod" },
  validate(obj) {
    if (!obj.metadata.labels?.team) return { allowed: false, message: "a team label is required" };
  },
  admission: { operations: ["CREATE", "DELETE"] },
};`, "h.test.js": `
test("delete", () => {
  const h = harness("./policy.js");
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "prod", labels: { team: "x" } } };
  h.add(cm);
  const d = h.admit({ operation: "DELETE", oldObject: cm });
  expect(d).toMatchObject({ allowed: false, code: 500, outcome: "errored" });
  expect(d.message).toContain("policy.js:5:");
  expect(d.message).toContain("TypeError");
  expect(d.message).toContain("(obj is null on DELETE; use ctx.oldObject)");
});
`})
}
