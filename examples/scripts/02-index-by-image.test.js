// Tests of 02-index-by-image.js, run offline by `runner test` (see docs/testing.md).
const DEPLOYMENTS = "apps/v1/deployments";

function deployment(namespace, name, ...images) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) },
      },
    },
  };
}

test("a new deployment reports who else uses its image", () => {
  const h = harness("./02-index-by-image.js", { objects: [deployment("web", "a", "app:1")] });
  expect(h.logs).toEqual([]); // initial adds are not reported
  h.add(deployment("ops", "b", "app:1"));
  expect(h.logs).toEqual([
    { level: "info", message: "deployments using image", image: "app:1", count: 2, deployments: "ops/b,web/a" },
  ]);
});

test("changing an image moves the deployment in the index", () => {
  const h = harness("./02-index-by-image.js", { objects: [deployment("web", "a", "app:1"), deployment("web", "b", "app:1")] });
  h.patch(DEPLOYMENTS, "web", "b", { spec: { template: { spec: { containers: [{ name: "c0", image: "app:2" }] } } } }, { type: "strategic" });
  expect(h.logs).toEqual([
    { level: "info", message: "deployments using image", image: "app:2", count: 1, deployments: "web/b" },
  ]);
});

test("one line per container", () => {
  const h = harness("./02-index-by-image.js");
  h.add(deployment("web", "a", "app:1", "sidecar:1"));
  expect(h.logs.map((l) => l.image)).toEqual(["app:1", "sidecar:1"]);
});

test("a change that keeps the images is not reported", () => {
  const h = harness("./02-index-by-image.js", { objects: [deployment("web", "a", "app:1")] });
  h.patch(DEPLOYMENTS, "web", "a", { metadata: { labels: { x: "y" } } });
  expect(h.logs).toHaveLength(0);
});
