// The plugin typed-harness.test.ts drives: it logs every ConfigMap (of --gvr), labels the ones
// added live, and fails on one named "bad".
export default defineScript({
  onAdd(cm, ctx) {
    log.info("seen", { name: cm.metadata.name });
    if (cm.metadata.name === "bad") {
      throw new Error("a bad configmap");
    }
    if (!ctx.isInInitialList && cm.metadata.labels?.seen === undefined) {
      k8s.patch("v1/configmaps", cm.metadata.namespace ?? "", cm.metadata.name, { metadata: { labels: { seen: "yes" } } });
    }
  },
});
