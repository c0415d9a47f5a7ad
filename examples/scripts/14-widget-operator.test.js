// Tests of 14-widget-operator.js, run offline by `runner test`.
const WIDGETS = "example.com/v1/widgets";

function widget(namespace, name, size, color) {
  return { apiVersion: "example.com/v1", kind: "Widget", metadata: { name, namespace }, spec: { size, color } };
}

test("a widget gets a finalizer, an owned configmap, a Ready condition and an event", () => {
  const h = harness("./14-widget-operator.js", { objects: ["../crds/widgets.yaml"] });
  h.add(widget("web", "dial", 3, "blue"));
  const w = h.get(WIDGETS, "web", "dial");
  expect(w.metadata.finalizers).toEqual(["example.com/widget-config"]);
  expect(w.status.conditions).toMatchObject([{ type: "Ready", status: "True", reason: "ConfigUpToDate" }]);
  const cm = h.get("v1/configmaps", "web", "dial-config");
  expect(cm.data).toEqual({ size: "3", color: "blue" });
  expect(cm.metadata.ownerReferences).toMatchObject([{ kind: "Widget", name: "dial", controller: true }]);
  // One Event; should a reconcile run before its ConfigMap is cached and write it again, the
  // repeat is counted on that Event (a patch), not a second Event.
  expect(h.writes.filter((x) => x.resource === "v1/events" && x.verb === "create").map((x) => x.body.reason)).toEqual(["ConfigWritten"]);
});

test("deleting the widget removes its configmap, then the finalizer", () => {
  const h = harness("./14-widget-operator.js", { objects: ["../crds/widgets.yaml"] });
  h.add(widget("web", "dial", 3, "blue"));
  h.delete(h.get(WIDGETS, "web", "dial"));
  expect(h.get(WIDGETS, "web", "dial")).toBeNull();
  expect(h.get("v1/configmaps", "web", "dial-config")).toBeNull();
});
