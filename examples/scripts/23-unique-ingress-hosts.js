// 23 — admission with an index: no two Ingresses may claim the same host.
//
// validate reads the script's own cache and indexes through ctx.cache, as handlers do: the
// index byHost answers "who else has this host?" without listing every Ingress. A denial's
// code is 409 Conflict here, not the default 403. The cache holds what the runner has seen, so
// two creates racing within the same instant can both pass; the index catches every later one.
const INGRESSES = "networking.k8s.io/v1/ingresses";

const hostsOf = (ing) => (ing.spec?.rules ?? []).map((r) => r.host).filter(Boolean);
const keyOf = (obj) => `${obj.metadata.namespace}/${obj.metadata.name}`;

export default {
  watch: INGRESSES,
  indexers: { byHost: hostsOf },

  validate(ing, ctx) {
    const taken = [];
    for (const host of hostsOf(ing)) {
      for (const other of ctx.cache.byIndex("byHost", host)) {
        // On UPDATE the cache holds this Ingress's old version: it does not conflict with itself.
        if (keyOf(other) !== keyOf(ing)) taken.push(`${host} (claimed by ${keyOf(other)})`);
      }
    }
    if (taken.length > 0) {
      return { allowed: false, code: 409, message: `host already in use: ${taken.join(", ")}` };
    }
  },
};
