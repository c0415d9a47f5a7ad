// Tests of 05-replicate-secret.js, run offline by `runner test` (see docs/testing.md).
const SECRETS = "v1/secrets";
const namespace = (name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

// Secrets are written with stringData, which the API server stores base64-encoded in data.
function secret(ns, name, token, labels = { "jsinformer.io/replicate": "true" }) {
  return { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: ns, labels }, stringData: { token } };
}

const copies = (h, name) =>
  h.list(SECRETS, { fieldSelector: `metadata.name=${name}` }).map((s) => `${s.metadata.namespace}:${s.data.token}`);

test("a labelled secret is copied into every other namespace", () => {
  const h = harness("./05-replicate-secret.js", { objects: [namespace("a"), namespace("b"), secret("a", "registry", "s3cr3t")] });
  // default, kube-node-lease, kube-public and kube-system exist as on a fresh cluster
  expect(copies(h, "registry")).toEqual(["a:czNjcjN0", "b:czNjcjN0", "default:czNjcjN0",
    "kube-node-lease:czNjcjN0", "kube-public:czNjcjN0", "kube-system:czNjcjN0"]);
  const copy = h.get(SECRETS, "b", "registry");
  expect(copy.metadata.annotations).toEqual({ "jsinformer.io/replica-of": "a/registry" });
  expect(h.writes.every((w) => w.verb === "patch" && w.patchType === "apply")).toBe(true);
});

test("a namespace created later gets the copies", () => {
  const h = harness("./05-replicate-secret.js", { objects: [secret("default", "registry", "s3cr3t")] });
  h.add(namespace("late"));
  expect(h.get(SECRETS, "late", "registry").data).toEqual({ token: "czNjcjN0" }); // base64 of s3cr3t
});

test("changing the source updates the copies", () => {
  const h = harness("./05-replicate-secret.js", { objects: [namespace("b"), secret("default", "registry", "s3cr3t")] });
  h.patch(SECRETS, "default", "registry", { stringData: { token: "n3w" } });
  expect(h.get(SECRETS, "b", "registry").data.token).toBe("bjN3");
});

test("deleting the source deletes the copies, and only ours", () => {
  const h = harness("./05-replicate-secret.js", { objects: [namespace("b"), secret("default", "registry", "s3cr3t")] });
  h.add(secret("b", "unrelated", "x", {}));
  h.delete(SECRETS, "default", "registry");
  expect(copies(h, "registry")).toEqual([]);
  expect(h.get(SECRETS, "b", "unrelated")).not.toBeNull();
});

test("a same-named secret someone else wrote is not overwritten", () => {
  const h = harness("./05-replicate-secret.js", {
    objects: [namespace("b"), secret("b", "registry", "theirs", {}), secret("default", "registry", "s3cr3t")],
  });
  expect(h.get(SECRETS, "b", "registry").data.token).toBe("dGhlaXJz");
  const refused = h.writes.find((w) => w.namespace === "b");
  expect(refused.error).toMatchObject({ code: 409, reason: "Conflict" });
  expect(h.logs.find((l) => l.namespace === "b")).toMatchObject({ level: "warn", message: "secret not copied", reason: "Conflict" });
});

test("an unlabelled secret is never seen", () => {
  const h = harness("./05-replicate-secret.js", { objects: [namespace("b")] });
  h.add(secret("default", "private", "x", {}));
  expect(h.writes).toEqual([]);
});
