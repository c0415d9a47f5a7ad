// 03 — follow ownerReferences across resources: Pod -> ReplicaSet -> Deployment.
//
// A script may watch several resources; ctx.cache answers for any of them.
const RS = "apps/v1/replicasets";
const DEPLOY = "apps/v1/deployments";

export default {
  watch: ["v1/pods", RS, DEPLOY],

  onAdd(obj, ctx) {
    if (ctx.resource !== "v1/pods") return;
    const chain = owners(obj, ctx);
    if (chain.length > 0) {
      log.info("pod owner", { pod: `${obj.metadata.namespace}/${obj.metadata.name}`, owners: chain.join(" <- ") });
    }
  },
};

// owners walks controller ownerReferences upwards through the cache.
function owners(obj, ctx) {
  const chain = [];
  const kinds = { ReplicaSet: RS, Deployment: DEPLOY };
  let current = obj;
  while (current) {
    const ref = (current.metadata.ownerReferences || []).find((r) => r.controller);
    if (!ref || !kinds[ref.kind]) break;
    chain.push(`${ref.kind}/${ref.name}`);
    current = ctx.cache.get(obj.metadata.namespace, ref.name, kinds[ref.kind]);
  }
  return chain;
}
