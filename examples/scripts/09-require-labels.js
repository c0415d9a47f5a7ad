// 09 — a label audit sharing its helpers with example 10 through a module, lib/labels.js.
//
// A plugin imports other files by relative path (ESM `import` or CommonJS `require`); the runner
// bundles them into the plugin. Every Deployment lacking a required label is reported once per
// change, and again when it is fixed.
import { keyOf, missingLabels } from "./lib/labels.js";

export default {
  watch: "apps/v1/deployments",

  onAdd(d) {
    const missing = missingLabels(d);
    if (missing.length > 0) log.warn("missing labels", { deployment: keyOf(d), missing: missing.join(",") });
  },

  onUpdate(oldD, d) {
    const before = missingLabels(oldD).join(",");
    const after = missingLabels(d).join(",");
    if (before === after) return;
    if (after === "") {
      log.info("labels complete", { deployment: keyOf(d) });
    } else {
      log.warn("missing labels", { deployment: keyOf(d), missing: after });
    }
  },
};
