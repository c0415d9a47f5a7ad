package jstest_test

import (
	"testing"
)

// Admission in runner test: h.admit, and the in-memory cluster's writes through the
// folder's admission scripts.

const teamPolicy = `
export default {
  watch: { resource: "v1/configmaps", namespace: "prod" },
  validate(obj, ctx) {
    if (ctx.operation === "DELETE") {
      if ((ctx.oldObject.metadata.labels || {}).protected) return { allowed: false, message: "protected" };
      return;
    }
    if (obj.metadata.name === "boom") throw new Error("boom");
    const team = (obj.metadata.labels || {}).team;
    if (!team) return { allowed: false, message: "a team label is required (" + ctx.userInfo.username + ")" };
    if (team === "old") return { allowed: true, warnings: ["team old is deprecated"] };
  },
  mutate(obj, ctx) {
    if (ctx.operation === "DELETE" || (obj.data || {}).owner) return;
    const out = util.clone(obj);
    out.data = { ...out.data, owner: "platform" };
    return out;
  },
  admission: { operations: ["CREATE", "UPDATE", "DELETE"] },
};`

const auditPolicy = `
export default {
  watch: { resource: "v1/configmaps", namespace: "prod" },
  validate(obj) {
    if ((obj.data || {}).size === "huge") return { allowed: false, message: "too big" };
  },
  admission: { mode: "audit" },
};`

// oldTeam labels a copy of every ConfigMap of prod with team "old", which the team policy
// allows with a warning.
const oldTeam = `
export default {
  watch: { resource: "v1/configmaps", namespace: "prod" },
  async onAdd(cm) {
    if (cm.metadata.name.endsWith("-old")) return;
    await k8s.create("v1/configmaps", { apiVersion: "v1", kind: "ConfigMap",
      metadata: { name: cm.metadata.name + "-old", namespace: "prod", labels: { team: "old" } } });
  },
};`

// copier copies every ConfigMap of prod into a "<name>-copy" ConfigMap without labels, which
// the team policy denies.
const copier = `
export default {
  watch: { resource: "v1/configmaps", namespace: "prod" },
  async onAdd(cm) {
    if (cm.metadata.name.endsWith("-copy")) return;
    log.info("seen", { name: cm.metadata.name, owner: (cm.data || {}).owner || "" });
    await k8s.create("v1/configmaps", { apiVersion: "v1", kind: "ConfigMap",
      metadata: { name: cm.metadata.name + "-copy", namespace: "prod" } });
  },
};`

func TestHarnessAdmit(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"team.js": teamPolicy, "audit.js": auditPolicy, "h.test.js": `
const cm = (name, labels, data, ns = "prod") => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns, labels }, data });

test("a denial after the mutation", () => {
  const h = harness("./team.js", { admission: [] });
  const d = h.admit({ operation: "CREATE", object: cm("a") });
  expect(d).toMatchObject({ allowed: false, code: 403, outcome: "denied", message: "a team label is required (runner-test)" });
  expect(d.decisions.map((x) => x.webhook + " " + x.outcome)).toEqual(["mutate allowed", "validate denied"]);
  expect(d.patch).toEqual([{ op: "add", path: "/data", value: { owner: "platform" } }]);
});

test("warnings, the mutated object and the user", () => {
  const h = harness("./team.js", { admission: [] });
  const d = h.admit({ operation: "CREATE", object: cm("a", { team: "old" }, { k: "v" }), userInfo: { username: "alice" } });
  expect(d).toMatchObject({ allowed: true, code: 200, outcome: "warned", warnings: ["team old is deprecated"] });
  expect(d.object.data).toEqual({ k: "v", owner: "platform" });
  expect(h.admit({ operation: "CREATE", object: cm("a"), userInfo: { username: "alice" } }).message).toContain("(alice)");
});

test("failurePolicy Fail answers for a throwing validate", () => {
  const h = harness("./team.js", { admission: [] });
  const d = h.admit({ operation: "CREATE", object: cm("boom", { team: "a" }) });
  expect(d).toMatchObject({ allowed: false, code: 500, outcome: "errored" });
  expect(d.message).toContain("team.js validate failed: team.js:9:");
});

test("requests no webhook matches", () => {
  const h = harness("./team.js", { admission: [] });
  for (const req of [
    { operation: "CREATE", object: cm("a", undefined, undefined, "default") },
    { operation: "CONNECT", object: cm("a") },
    { operation: "UPDATE", subresource: "status", object: cm("a"), oldObject: cm("a") },
  ]) {
    expect(h.admit(req)).toMatchObject({ allowed: true, outcome: "allowed", decisions: [], patch: null });
  }
});

test("DELETE takes the stored object as oldObject", () => {
  const h = harness("./team.js", { admission: [], objects: [cm("gone", undefined, { owner: "x" })] });
  const d = h.admit({ operation: "DELETE", oldObject: cm("gone") });
  expect(d).toMatchObject({ allowed: true, object: null });
  expect(h.admit({ operation: "DELETE", oldObject: cm("gone", { protected: "yes" }) }).message).toBe("protected");
  expect(d.decisions.map((x) => x.webhook)).toEqual(["mutate", "validate"]);
});

test("the folder's admission scripts, in order, and script", () => {
  const h = harness("./team.js");
  const d = h.admit({ operation: "CREATE", object: cm("a", { team: "a" }, { size: "huge" }) });
  expect(d.decisions.map((x) => x.script + " " + x.webhook + " " + x.outcome)).toEqual(
    ["team.js mutate allowed", "audit.js validate audited", "team.js validate allowed"]);
  expect(d).toMatchObject({ allowed: true, outcome: "audited", message: "too big" });
  // A denial after an audit: the answer is the denial's, as the client's error is.
  expect(h.admit({ operation: "CREATE", object: cm("a", undefined, { size: "huge" }) })).toMatchObject(
    { allowed: false, code: 403, outcome: "denied", message: "a team label is required (runner-test)" });
  expect(h.admit({ operation: "CREATE", object: cm("a"), script: "./audit.js" }).decisions).toHaveLength(1);
  let caught;
  try { h.admit({ operation: "CREATE", object: cm("a"), script: "./none.js" }); } catch (e) { caught = e; }
  expect(String(caught)).toContain("none.js is not loaded");
});

test("bad requests throw", () => {
  const h = harness("./team.js", { admission: [] });
  for (const [req, msg] of [
    [{ operation: "create", object: cm("a") }, "operation must be"],
    [{ operation: "CREATE" }, "an object is required"],
    [{ operation: "CREATE", object: cm("a"), objects: [] }, "unknown option 'objects'"],
  ]) {
    let caught;
    try { h.admit(req); } catch (e) { caught = e; }
    expect(String(caught)).toContain(msg);
  }
});
`})
}

func TestHarnessWritesAreAdmitted(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"team.js": teamPolicy, "copier.js": copier, "old-team.js": oldTeam, "h.test.js": `
const cm = (name, labels, ns = "prod") => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns, labels }, data: { k: "v" } });

test("the test's writes", () => {
  const h = harness("./copier.js");
  let caught;
  try { h.add(cm("plain")); } catch (e) { caught = e; }
  expect(caught).toMatchObject({ code: 403, reason: "Forbidden" });
  const shape = /^admission webhook "team-js-[0-9a-f]{8}\.validate\.jsinformer\.io" denied the request: a team label is required \(runner-test\)$/;
  expect(shape.test(caught.message) ? "" : caught.message).toBe("");
  expect(h.get("v1/configmaps", "prod", "plain")).toBeNull();
  const stored = h.add(cm("labelled", { team: "a" }));
  expect(stored.data).toEqual({ k: "v", owner: "platform" });
  expect(h.add(cm("elsewhere", undefined, "default")).data).toEqual({ k: "v" });
});

test("the plugin sees the mutated object and its writes are denied", () => {
  const h = harness("./copier.js");
  h.add(cm("labelled", { team: "a" }));
  expect(h.logs).toEqual([{ level: "info", message: "seen", name: "labelled", owner: "platform" }]);
  expect(h.writes).toHaveLength(1);
  expect(h.writes[0].error).toMatchObject({ code: 403, reason: "Forbidden" });
  expect(h.errors[0].error).toContain("a team label is required");
});

test("seeded objects predate the policies", () => {
  const h = harness("./copier.js", { objects: [cm("old")] });
  expect(h.get("v1/configmaps", "prod", "old").data).toEqual({ k: "v" });
});

test("updates, patches and deletes are admitted", () => {
  const h = harness("./copier.js");
  const stored = h.add(cm("labelled", { team: "a" }));
  delete stored.metadata.labels;
  let caught;
  try { h.update(stored); } catch (e) { caught = e; }
  expect(caught).toMatchObject({ code: 403 });
  try { h.patch("v1/configmaps", "prod", "labelled", { metadata: { labels: { team: null } } }); } catch (e) { caught = e; }
  expect(caught).toMatchObject({ code: 403 });
  h.delete("v1/configmaps", "prod", "labelled");
  expect(h.get("v1/configmaps", "prod", "labelled")).toBeNull();
  h.add(cm("keep", { team: "a", protected: "yes" }));
  try { h.delete("v1/configmaps", "prod", "keep"); } catch (e) { caught = e; }
  expect(caught.message).toContain("denied the request: protected");
  expect(h.get("v1/configmaps", "prod", "keep")).not.toBeNull();
});

test("a write's warnings are in h.writes", () => {
  const h = harness("./old-team.js");
  h.add(cm("labelled", { team: "a" }));
  expect(h.writes).toHaveLength(1);
  expect(h.writes[0]).toMatchObject({ verb: "create", name: "labelled-old", warnings: ["team old is deprecated"] });
  expect(h.writes[0].error).toBeUndefined();
  const copies = harness("./copier.js");
  copies.add(cm("labelled", { team: "a" }));
  expect(copies.writes[0].warnings).toEqual([]);
});

test("admission: [] loads no other script", () => {
  const h = harness("./copier.js", { admission: [] });
  h.add(cm("plain"));
  expect(h.get("v1/configmaps", "prod", "plain-copy")).not.toBeNull();
});
`})
}

// TestHarnessAdmitSelectsNamespaces: admission.namespaceSelector and excludeNamespaces match
// as the registered webhook does, from the cluster's Namespaces (a Namespace by its own labels).
func TestHarnessAdmitSelectsNamespaces(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"sel.js": `
export default {
  watch: ["v1/configmaps", "v1/namespaces"],
  validate(obj) { return { allowed: false, message: "no " + obj.kind }; },
  admission: { failurePolicy: "Ignore", namespaceSelector: { matchLabels: { policy: "on" } }, excludeNamespaces: ["legacy"] },
};`, "h.test.js": `
const cm = (ns) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: ns } });
const ns = (name, labels) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });

test("selected by label, excluded by name", () => {
  const h = harness("./sel.js", { objects: [ns("shop", { policy: "on" }), ns("legacy", { policy: "on" }), ns("dev")] });
  expect(h.admit({ operation: "CREATE", object: cm("shop") }).outcome).toBe("denied");
  expect(h.admit({ operation: "CREATE", object: cm("dev") }).decisions).toEqual([]);
  expect(h.admit({ operation: "CREATE", object: cm("legacy") }).decisions).toEqual([]);
  expect(h.admit({ operation: "CREATE", object: ns("new", { policy: "on" }) }).outcome).toBe("denied");
  expect(h.admit({ operation: "CREATE", object: ns("other") }).decisions).toEqual([]);
  expect(() => h.add(cm("shop"))).toThrow("no ConfigMap");
  h.add(cm("dev"));
});
`})
}
