// Tests of 12-owned-configmaps.js, run offline by `runner test`.
const DEPLOYMENTS = "apps/v1/deployments";
const COUNT = "jsinformer.io/owned-configmaps";

function deployment(namespace, name) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
  };
}

function ownedBy(owner, name) {
  return {
    apiVersion: "v1", kind: "ConfigMap",
    metadata: {
      name, namespace: owner.metadata.namespace,
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: owner.metadata.name, uid: owner.metadata.uid, controller: true }],
    },
  };
}

test("a deployment carries the number of configmaps it controls", () => {
  const h = harness("./12-owned-configmaps.js", { objects: [deployment("web", "api")] });
  expect(h.get(DEPLOYMENTS, "web", "api").metadata.annotations[COUNT]).toBe("0");
  const api = h.get(DEPLOYMENTS, "web", "api");
  h.add(ownedBy(api, "a"));
  h.add(ownedBy(api, "b"));
  h.add({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "loose", namespace: "web" } });
  expect(h.get(DEPLOYMENTS, "web", "api").metadata.annotations[COUNT]).toBe("2");
  h.delete(h.get("v1/configmaps", "web", "a"));
  expect(h.get(DEPLOYMENTS, "web", "api").metadata.annotations[COUNT]).toBe("1");
  expect(h.errors).toHaveLength(0); // a configmap's own key never reaches reconcile
});
