// Tests of 11-outdated-images.js, run offline by `runner test`. It imports the npm package
// semver: run `npm install --ignore-scripts` in this folder first (make demo does).
function deployment(namespace, name, image) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image }] } },
    },
  };
}

test("warns about images older than the minimum, semver-coerced", () => {
  const h = harness("./11-outdated-images.js", {
    objects: [deployment("web", "old", "nginx:1.24-alpine"), deployment("web", "new", "nginx:1.27"), deployment("web", "latest", "nginx")],
  });
  expect(h.logs).toEqual([
    { level: "warn", message: "outdated image", deployment: "web/old", image: "nginx:1.24-alpine", version: "1.24.0", minimum: "1.25.0" },
  ]);
});

test("an image change is audited again; other changes are not", () => {
  const h = harness("./11-outdated-images.js", { objects: [deployment("db", "cache", "redis:7.4")] });
  const d = h.get("apps/v1/deployments", "db", "cache");
  d.spec.template.spec.containers[0].image = "registry.local/redis:7.0.15";
  h.update(d);
  const again = h.get("apps/v1/deployments", "db", "cache");
  again.metadata.labels = { touched: "yes" };
  h.update(again);
  expect(h.logs.map((l) => l.image)).toEqual(["registry.local/redis:7.0.15"]);
});
