// 04 — a custom resource, written in TypeScript. The CRD is examples/crds/widgets.yaml.
//
// TypeScript is stripped by the runner (no type checking): types are for your editor.
interface Widget {
  metadata: { name: string; namespace: string };
  spec: { size?: number; color?: string };
}

export default {
  watch: { resource: "widgets.example.com" },

  onAdd(w: Widget) {
    log.info("widget", { name: `${w.metadata.namespace}/${w.metadata.name}`, size: w.spec.size ?? 0, color: w.spec.color ?? "none" });
  },

  onUpdate(_old: Widget, w: Widget) {
    if ((w.spec.size ?? 0) > 10) {
      log.warn("widget too large", { name: w.metadata.name, size: w.spec.size });
    }
  },
};
