// 12 — owner mapping: each Deployment carries the number of ConfigMaps it controls.
//
// ConfigMap events enqueue the key of their controller owner (`enqueue: "owner"`), as
// controller-runtime's Owns() does, so reconcile sees only the keys of Deployments (and of
// other owners, which it finds no Deployment for and skips). Deployment events enqueue their
// own key, the default. Try it:
//   kubectl -n demo-a create configmap web-extra --from-literal=k=v
//   kubectl -n demo-a patch configmap web-extra --type merge -p "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"$(kubectl -n demo-a get deploy web -o jsonpath='{.metadata.uid}')\",\"controller\":true}]}}"
const DEPLOYMENTS = "apps/v1/deployments";
const CONFIGMAPS = "v1/configmaps";
const COUNT = "jsinformer.io/owned-configmaps";

export default {
  watch: [DEPLOYMENTS, { resource: CONFIGMAPS, enqueue: "owner" }],

  // Level-based: whatever the event, count what the Deployment controls now.
  reconcile(key, ctx) {
    const [namespace, name] = key.split("/");
    const d = ctx.cache.get(namespace, name, DEPLOYMENTS);
    if (!d) return; // deleted, or not a Deployment's key
    const owned = ctx.cache.list({ namespace, resource: CONFIGMAPS }).filter((cm) =>
      (cm.metadata.ownerReferences || []).some((r) => r.controller && r.uid === d.metadata.uid));
    const want = String(owned.length);
    if ((d.metadata.annotations || {})[COUNT] === want) return;
    k8s.patch(DEPLOYMENTS, namespace, name, { metadata: { annotations: { [COUNT]: want } } });
    log.info("owned configmaps", { deployment: key, count: owned.length });
  },
};
