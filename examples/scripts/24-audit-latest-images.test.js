// Tests of 24-audit-latest-images.js, run offline by `runner test` (see docs/testing.md).
const DEPLOYMENTS = "apps/v1/deployments";

function deployment(name, ...images) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace: "web" },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) } },
    },
  };
}

test("an unpinned image is audited: allowed, with what would have been said", () => {
  const h = harness("./24-audit-latest-images.js");
  const d = h.admit({ operation: "CREATE", object: deployment("api", "nginx:1.27", "redis", "registry.local:5000/tools:latest") });
  expect(d).toMatchObject({ allowed: true, outcome: "audited", warnings: [],
    message: "unpinned images: redis, registry.local:5000/tools:latest; use a version tag or a digest" });
  h.add(deployment("api", "redis"));
  expect(h.get(DEPLOYMENTS, "web", "api")).not.toBeNull();
});

test("pinned images pass", () => {
  const h = harness("./24-audit-latest-images.js");
  const d = h.admit({ operation: "CREATE", object: deployment("api", "nginx:1.27", "registry.local:5000/tools@sha256:0123") });
  expect(d).toMatchObject({ allowed: true, outcome: "allowed", message: "" });
});
