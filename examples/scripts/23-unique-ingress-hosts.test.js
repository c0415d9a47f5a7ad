// Tests of 23-unique-ingress-hosts.js, run offline by `runner test` (see docs/testing.md).
const INGRESSES = "networking.k8s.io/v1/ingresses";

function ingress(namespace, name, ...hosts) {
  return {
    apiVersion: "networking.k8s.io/v1", kind: "Ingress",
    metadata: { name, namespace },
    spec: { rules: hosts.map((host) => ({ host, http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name, port: { number: 80 } } } }] } })) },
  };
}

test("a host another Ingress claims is refused with 409", () => {
  const h = harness("./23-unique-ingress-hosts.js", { objects: [ingress("web", "shop", "shop.example.com")] });
  const d = h.admit({ operation: "CREATE", object: ingress("team-b", "copy", "www.example.com", "shop.example.com") });
  expect(d).toMatchObject({ allowed: false, code: 409, outcome: "denied",
    message: "host already in use: shop.example.com (claimed by web/shop)" });
  let caught;
  try { h.add(ingress("team-b", "copy", "shop.example.com")); } catch (e) { caught = e; }
  expect(caught).toMatchObject({ code: 409, reason: "" });
  expect(h.list(INGRESSES)).toHaveLength(1);
});

test("free hosts are admitted, and an Ingress may keep its own host on update", () => {
  const h = harness("./23-unique-ingress-hosts.js");
  const shop = h.add(ingress("web", "shop", "shop.example.com"));
  h.add(ingress("web", "blog", "blog.example.com"));
  shop.spec.rules[0].http.paths[0].path = "/shop";
  h.update(shop);
  expect(h.get(INGRESSES, "web", "shop").spec.rules[0].http.paths[0].path).toBe("/shop");
});

test("a host is free again once its Ingress is deleted", () => {
  const h = harness("./23-unique-ingress-hosts.js", { objects: [ingress("web", "shop", "shop.example.com")] });
  h.delete(INGRESSES, "web", "shop");
  expect(h.admit({ operation: "CREATE", object: ingress("team-b", "shop", "shop.example.com") }).allowed).toBe(true);
});
