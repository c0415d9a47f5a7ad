// Tests of 03-pod-owner.js, run offline by `runner test` (see docs/testing.md).
const ref = (kind, name, uid) => ({ apiVersion: "apps/v1", kind, name, uid, controller: true });

const deployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "shop", uid: "d-1" },
  spec: { selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "main", image: "nginx" }] } } },
};

const replicaSet = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name: "web-7d9f", namespace: "shop", ownerReferences: [ref("Deployment", "web", "d-1")] },
  spec: { selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "main", image: "nginx" }] } } },
};

function pod(name, owners = []) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "shop", ownerReferences: owners },
    spec: { containers: [{ name: "main", image: "nginx" }] },
  };
}

test("a pod's owners are followed through the cache", () => {
  const h = harness("./03-pod-owner.js", { objects: [deployment, replicaSet] });
  h.add(pod("web-7d9f-abcde", [ref("ReplicaSet", "web-7d9f", "rs-1")]));
  expect(h.logs).toEqual([
    { level: "info", message: "pod owner", pod: "shop/web-7d9f-abcde", owners: "ReplicaSet/web-7d9f <- Deployment/web" },
  ]);
});

test("an owner not in the cache ends the chain", () => {
  const h = harness("./03-pod-owner.js");
  h.add(pod("lonely-rs-pod", [ref("ReplicaSet", "gone", "rs-2")]));
  expect(h.logs[0].owners).toBe("ReplicaSet/gone");
});

test("a pod without owners is not logged", () => {
  const h = harness("./03-pod-owner.js", { objects: [deployment] });
  h.add(pod("bare"));
  expect(h.logs).toEqual([]);
});
