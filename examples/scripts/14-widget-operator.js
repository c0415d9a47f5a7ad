// 14 — an operator for Widgets (examples/crds/widgets.yaml): each Widget gets a ConfigMap it
// owns, a finalizer that removes the ConfigMap before the Widget goes, a Ready condition in its
// status, and an Event when its ConfigMap changes.
//
// ConfigMap events enqueue their owning Widget (`enqueue: "owner"`), so a ConfigMap edited or
// deleted by hand is put back. Try it:
//   kubectl apply -f examples/crds/widgets.yaml
//   kubectl -n demo-a apply -f - <<< '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"dial"},"spec":{"size":3,"color":"blue"}}'
//   kubectl -n demo-a get configmap dial-config -o yaml; kubectl -n demo-a delete widget dial
const WIDGETS = "example.com/v1/widgets";
const CONFIGMAPS = "v1/configmaps";
const FINALIZER = "example.com/widget-config";

export default {
  watch: [WIDGETS, { resource: CONFIGMAPS, enqueue: "owner" }],

  reconcile(key, ctx) {
    const [namespace, name] = key.split("/");
    const widget = ctx.cache.get(namespace, name, WIDGETS);
    if (!widget) return; // gone, or the key of another kind of owner
    const configName = `${name}-config`;
    if (widget.metadata.deletionTimestamp) {
      deleteIfPresent(namespace, configName);
      k8s.removeFinalizer(WIDGETS, namespace, name, FINALIZER);
      return;
    }
    if (!(widget.metadata.finalizers || []).includes(FINALIZER)) {
      k8s.addFinalizer(WIDGETS, namespace, name, FINALIZER); // its event brings us back here
      return;
    }
    const data = { size: String(widget.spec.size), color: String(widget.spec.color) };
    const current = ctx.cache.get(namespace, configName, CONFIGMAPS);
    if (!current || util.diff(current.data || {}, data).length > 0) {
      k8s.patch(CONFIGMAPS, namespace, configName, {
        apiVersion: "v1", kind: "ConfigMap",
        metadata: { name: configName, namespace, ownerReferences: [util.ownerReference(widget)] },
        data,
      }, { type: "apply", force: true });
      k8s.event(widget, "Normal", "ConfigWritten", `ConfigMap ${configName} written`);
    }
    setReady(widget, `ConfigMap ${configName} is up to date`);
  },
};

function deleteIfPresent(namespace, name) {
  try {
    k8s.delete(CONFIGMAPS, namespace, name);
  } catch (e) {
    if (e.code !== 404) throw e;
  }
}

// setReady writes the Ready condition when it says something new; lastTransitionTime moves
// only when the status does.
function setReady(widget, message) {
  const old = (widget.status || {}).conditions || [];
  const conditions = util.setStatusCondition(old, {
    type: "Ready", status: "True", reason: "ConfigUpToDate", message,
    observedGeneration: widget.metadata.generation,
  });
  if (util.diff(old, conditions).length === 0) return;
  k8s.patchStatus(WIDGETS, widget.metadata.namespace, widget.metadata.name, { status: { conditions } });
}
