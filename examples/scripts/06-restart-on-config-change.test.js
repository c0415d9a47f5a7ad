// Tests of 06-restart-on-config-change.js, run offline by `runner test` (see docs/testing.md).
const DEPLOYMENTS = "apps/v1/deployments";
const CONFIGMAPS = "v1/configmaps";
const HASH = "jsinformer.io/config-hash";
const RESTARTED_AT = "jsinformer.io/restartedAt";

const configMap = (name, data) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "web" }, data });

function deployment(name, ...configMaps) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "web" },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name: "main", image: "nginx" }],
          volumes: configMaps.map((cm) => ({ name: cm, configMap: { name: cm } })),
        },
      },
    },
  };
}

const restartedAt = (d) => (d.spec.template.metadata.annotations || {})[RESTARTED_AT];

test("start-up records the hash and restarts nothing", () => {
  const h = harness("./06-restart-on-config-change.js", { objects: [configMap("app", { a: "1" }), deployment("api", "app")] });
  const d = h.get(DEPLOYMENTS, "web", "api");
  expect(d.metadata.annotations[HASH]).toBeDefined();
  expect(restartedAt(d)).toBeUndefined();
  expect(h.logs).toEqual([]);
});

test("a changed config map restarts the deployments that mount it", () => {
  const h = harness("./06-restart-on-config-change.js", {
    objects: [configMap("app", { a: "1" }), deployment("api", "app"), deployment("other")],
  });
  h.advance("5m");
  h.patch(CONFIGMAPS, "web", "app", { data: { a: "2" } });
  const d = h.get(DEPLOYMENTS, "web", "api");
  expect(restartedAt(d)).toBe("2030-01-01T00:05:00.000Z"); // scripts' Date follows the virtual clock
  expect(h.logs).toEqual([{ level: "info", message: "restarted deployment", deployment: "web/api", configMaps: "app" }]);
  expect(h.get(DEPLOYMENTS, "web", "other").metadata.annotations).toBeUndefined();
});

test("an unchanged config map restarts nothing", () => {
  const h = harness("./06-restart-on-config-change.js", { objects: [configMap("app", { a: "1" }), deployment("api", "app")] });
  h.patch(CONFIGMAPS, "web", "app", { metadata: { labels: { touched: "yes" } } });
  expect(restartedAt(h.get(DEPLOYMENTS, "web", "api"))).toBeUndefined();
});

test("a deployment waits for a config map that does not exist yet", () => {
  const h = harness("./06-restart-on-config-change.js", { objects: [deployment("api", "late")] });
  expect(h.writes).toHaveLength(0);
  h.add(configMap("late", { a: "1" }));
  expect(h.get(DEPLOYMENTS, "web", "api").metadata.annotations[HASH]).toBeDefined();
  expect(h.writes.map((w) => w.verb)).toEqual(["patch"]);
});
