// 04 — a custom resource, written in TypeScript and typed from the cluster. The CRD is
// examples/crds/widgets.yaml.
//
// The runner strips the types without checking them; they are for your editor and tsc.
// `runner types -o . --gvr widgets.example.com` wrote jsinformer.d.ts (the globals and
// defineScript) and resources.d.ts (Widget, from the CRD's OpenAPI schema) next to this file,
// and `tsc --noEmit` checks it (a test does, with tsconfig.json).
import type { Widget } from "./resources";

export default defineScript<Widget>({
  watch: { resource: "widgets.example.com" },

  onAdd(w) {
    log.info("widget", { name: `${w.metadata.namespace}/${w.metadata.name}`, size: w.spec?.size ?? 0, color: w.spec?.color ?? "none" });
  },

  onUpdate(_old, w) {
    if ((w.spec?.size ?? 0) > 10) {
      log.warn("widget too large", { name: w.metadata.name, size: w.spec?.size });
    }
  },
});
