// Tests of 07-ttl-cleanup.js, run offline by `runner test` (see docs/testing.md).
// The virtual clock starts at 2030-01-01T00:00:00Z; objects are created then.
const CONFIGMAPS = "v1/configmaps";

const withTTL = (name, ttl) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "tmp", annotations: ttl === undefined ? {} : { "jsinformer.io/ttl": ttl } },
});

test("an object lives until its ttl, then is deleted", () => {
  const h = harness("./07-ttl-cleanup.js", { objects: [withTTL("short", "30m")] });
  h.advance("29m");
  expect(h.get(CONFIGMAPS, "tmp", "short")).not.toBeNull();
  h.advance("1m");
  expect(h.get(CONFIGMAPS, "tmp", "short")).toBeNull();
  expect(h.writes).toMatchObject([{ verb: "delete", name: "short", propagationPolicy: "Background" }]);
});

test("settle runs the requeues due within the hour", () => {
  const h = harness("./07-ttl-cleanup.js", { objects: [withTTL("soon", "10m"), withTTL("later", "2h")] });
  h.settle();
  expect(h.list(CONFIGMAPS, { namespace: "tmp" }).map((c) => c.metadata.name)).toEqual(["later"]);
  expect(h.now().toISOString()).toBe("2030-01-01T00:10:00.000Z");
  h.settle({ within: "3h" });
  expect(h.list(CONFIGMAPS, { namespace: "tmp" })).toHaveLength(0);
});

test("an expiry time in the past deletes at once", () => {
  const h = harness("./07-ttl-cleanup.js");
  h.add(withTTL("old", "2029-12-31T00:00:00Z"));
  expect(h.get(CONFIGMAPS, "tmp", "old")).toBeNull();
});

test("a ttl that makes no sense is left alone, with a warning", () => {
  const h = harness("./07-ttl-cleanup.js", { objects: [withTTL("odd", "5"), withTTL("none")] });
  h.advance("24h");
  expect(h.list(CONFIGMAPS, { namespace: "tmp" })).toHaveLength(2);
  expect(h.logs).toEqual([
    { level: "warn", message: "ignoring a ttl that is neither a duration nor a time", resource: CONFIGMAPS, object: "tmp/odd", ttl: "5" },
  ]);
});

test("an object with a finalizer is only marked, and not deleted twice", () => {
  const held = withTTL("held", "1m");
  held.metadata.finalizers = ["example.com/keep"];
  const h = harness("./07-ttl-cleanup.js", { objects: [held], now: "2030-06-01T00:00:00Z" });
  h.advance("1m");
  const obj = h.get(CONFIGMAPS, "tmp", "held");
  expect(obj.metadata.deletionTimestamp).toBe("2030-06-01T00:01:00Z");
  // Marking it is a change, so reconcile runs again and deletes again, which changes nothing.
  expect(h.writes.map((w) => w.verb)).toEqual(["delete", "delete"]);
  h.advance("1h");
  expect(h.writes).toHaveLength(2);
  expect(h.errors).toEqual([]);
});
