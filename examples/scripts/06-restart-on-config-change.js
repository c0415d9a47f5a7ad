// 06 — restart Deployments when a ConfigMap they mount changes.
//
// An index maps each ConfigMap ("namespace/name") to the Deployments that mount it as a
// volume. A ConfigMap event enqueues those Deployments; reconcile hashes the data of the
// ConfigMaps a Deployment mounts and, when the hash differs from the one recorded on the
// Deployment, stamps the pod template, which rolls out new pods (as `kubectl rollout restart`).
// The first hash seen is only recorded, so starting the runner restarts nothing. Try it:
//   kubectl -n demo-a patch deploy web -p \
//     '{"spec":{"template":{"spec":{"volumes":[{"name":"config","configMap":{"name":"app-config"}}]}}}}'
//   kubectl -n demo-a patch configmap app-config -p '{"data":{"greeting":"hi"}}'
const DEPLOYMENTS = "apps/v1/deployments";
const CONFIGMAPS = "v1/configmaps";
const HASH = "jsinformer.io/config-hash"; // on the Deployment: the hash last acted on
const RESTARTED_AT = "jsinformer.io/restartedAt"; // on the pod template: changing it restarts pods

export default {
  watch: [DEPLOYMENTS, CONFIGMAPS],

  indexers: {
    // Runs for ConfigMaps too, which mount nothing.
    byConfigMap: (obj) => mounted(obj).map((name) => `${obj.metadata.namespace}/${name}`),
  },

  onAdd(obj, ctx) {
    if (ctx.resource === CONFIGMAPS) enqueueUsers(obj, ctx);
  },

  onUpdate(oldObj, obj, ctx) {
    if (ctx.resource === CONFIGMAPS) enqueueUsers(obj, ctx);
  },

  // Every event also enqueues its own object's key. Keys do not say which resource they name,
  // so reconcile acts only when the key is a Deployment's, and is level-based: it compares
  // what is with what was recorded, whatever the reason it ran.
  reconcile(key, ctx) {
    const [namespace, name] = key.split("/");
    const d = ctx.cache.get(namespace, name, DEPLOYMENTS);
    const names = d ? mounted(d) : [];
    if (names.length === 0) return;
    const configMaps = names.map((n) => ctx.cache.get(namespace, n, CONFIGMAPS));
    if (configMaps.includes(null)) return; // not seen yet: its onAdd enqueues us again
    const hash = fnv1a(JSON.stringify(configMaps.map((cm) => [cm.metadata.name, cm.data, cm.binaryData])));
    const recorded = (d.metadata.annotations || {})[HASH];
    if (hash === recorded) return;
    // The cache lags the server by the watch: right after our own patch it may still show the
    // old hash. resourceVersion makes the patch conditional on the state we decided from, so a
    // decision taken on a stale copy is refused (409) instead of restarting twice.
    const patch = { metadata: { resourceVersion: d.metadata.resourceVersion, annotations: { [HASH]: hash } } };
    const restart = recorded !== undefined;
    if (restart) {
      patch.spec = { template: { metadata: { annotations: { [RESTARTED_AT]: new Date().toISOString() } } } };
    }
    try {
      k8s.patch(DEPLOYMENTS, namespace, name, patch); // other failures throw: retried with backoff
    } catch (e) {
      if (e.code === 409) return { requeueAfter: "1s" }; // look again once the cache caught up
      throw e;
    }
    if (restart) log.info("restarted deployment", { deployment: key, configMaps: names.join(",") });
  },
};

function enqueueUsers(cm, ctx) {
  for (const key of ctx.cache.indexKeys("byConfigMap", `${cm.metadata.namespace}/${cm.metadata.name}`)) {
    ctx.enqueue(key);
  }
}

// mounted lists, sorted, the ConfigMaps a Deployment's pods mount as volumes.
function mounted(obj) {
  const pod = obj.spec && obj.spec.template ? obj.spec.template.spec : {};
  const names = (pod.volumes || []).filter((v) => v.configMap).map((v) => v.configMap.name);
  return [...new Set(names)].sort();
}

// fnv1a is a short, stable string hash (32-bit FNV-1a), enough to notice a change.
function fnv1a(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16);
}
