// Tests of 04-widgets.ts, in TypeScript, run offline by `runner test` (see docs/testing.md).
// The CRD comes from a fixture file: creating it makes the cluster serve widgets.
// jsinformer-test.d.ts, written by `runner types` next to jsinformer.d.ts, declares test,
// expect and harness; tsc checks this file with the plugins (tsconfig.json).
import type { Widget } from "./resources";

const widget = (name: string, spec: Widget["spec"]): Widget => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name, namespace: "toys" },
  spec,
});

test("every widget is logged with defaults for what it leaves out", () => {
  const h = harness("./04-widgets.ts", { objects: ["../crds/widgets.yaml", widget("w1", { size: 3, color: "red" })] });
  h.add(widget("w2", {}));
  expect(h.logs).toEqual([
    { level: "info", message: "widget", name: "toys/w1", size: 3, color: "red" },
    { level: "info", message: "widget", name: "toys/w2", size: 0, color: "none" },
  ]);
});

test("growing past 10 warns", () => {
  const h = harness("./04-widgets.ts", { objects: ["../crds/widgets.yaml", widget("w1", { size: 3 })] });
  h.patch("wd", "toys", "w1", { spec: { size: 12 } }); // the CRD's short name resolves too
  expect(h.logs[1]).toEqual({ level: "warn", message: "widget too large", name: "w1", size: 12 });
  expect(h.get<Widget>("wd", "toys", "w1")?.spec?.size).toBe(12);
});

test("without the CRD the plugin does not load", () => {
  expect(() => harness("./04-widgets.ts")).toThrow("unknown resource");
});
