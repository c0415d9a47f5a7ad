// 02 — a custom index: Deployments by container image, and a lookup through it.
//
// Index functions are pure: object in, list of strings out. The engine keeps the index per
// script version, so ctx.cache.byIndex always agrees with the events this script has seen.
export default {
  watch: "apps/v1/deployments",

  indexers: {
    byImage: (d) => d.spec.template.spec.containers.map((c) => c.image),
  },

  onAdd(d, ctx) {
    if (!ctx.isInInitialList) report(d, ctx);
  },

  onUpdate(oldD, newD, ctx) {
    const before = oldD.spec.template.spec.containers.map((c) => c.image).join(",");
    const after = newD.spec.template.spec.containers.map((c) => c.image).join(",");
    if (before !== after) report(newD, ctx);
  },
};

function report(d, ctx) {
  for (const c of d.spec.template.spec.containers) {
    const users = ctx.cache.indexKeys("byImage", c.image);
    log.info("deployments using image", { image: c.image, count: users.length, deployments: users.join(",") });
  }
}
