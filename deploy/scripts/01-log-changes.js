// 01 — log every Deployment change: the smallest useful plugin.
//
// On start-up (and after every reload) each existing Deployment arrives as an add with
// ctx.isInInitialList === true; after that, live changes arrive as they happen.
export default {
  watch: "apps/v1/deployments",

  onAdd(d, ctx) {
    log.info(ctx.isInInitialList ? "existing deployment" : "deployment created", {
      name: `${d.metadata.namespace}/${d.metadata.name}`,
      replicas: d.spec.replicas,
    });
  },

  onUpdate(oldD, newD) {
    // util.diff ignores bookkeeping such as resourceVersion and managedFields.
    const changes = util.diff(oldD, newD).filter((c) => !c.path.startsWith("status"));
    if (changes.length === 0) return;
    log.info("deployment changed", {
      name: `${newD.metadata.namespace}/${newD.metadata.name}`,
      changes: changes.map((c) => `${c.path}: ${JSON.stringify(c.old)} -> ${JSON.stringify(c.new)}`).join("; "),
    });
  },

  onDelete(d, ctx) {
    log.info("deployment deleted", {
      name: `${d.metadata.namespace}/${d.metadata.name}`,
      finalStateUnknown: ctx.finalStateUnknown,
    });
  },
};
