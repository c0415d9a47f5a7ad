// 05 — copy a Secret into every namespace and keep the copies in sync.
//
// Label a Secret `jsinformer.io/replicate=true` and a copy appears in every other namespace,
// including namespaces created later. Changing the source updates the copies; deleting it (or
// removing the label) deletes them. Try it on the demo cluster:
//   kubectl -n demo-a create secret generic registry-token --from-literal=token=s3cr3t
//   kubectl -n demo-a label secret registry-token jsinformer.io/replicate=true
//
// Copies are written with server-side apply, without force: a same-named Secret that someone
// else wrote is never overwritten; the apply fails with a Conflict, which is logged.
//
// One API call per namespace, one after the other on the script's one handler worker: with
// thousands of namespaces, or many created at once, a change takes that many round trips to
// reach every copy, and the events behind it wait. Where that matters, enqueue a key per
// (source, namespace) with ctx.enqueue and copy in `reconcile`, which `concurrency` runs on
// several workers (a reconcile script: 14).
const SECRETS = "v1/secrets";
const NAMESPACES = "v1/namespaces";
const REPLICA_OF = "jsinformer.io/replica-of"; // annotation on copies: the source's namespace/name

export default {
  // The label selector runs on the server: only labelled Secrets ever reach this script.
  watch: [{ resource: SECRETS, labelSelector: "jsinformer.io/replicate=true" }, NAMESPACES],

  onAdd(obj, ctx) {
    if (ctx.resource === NAMESPACES) {
      for (const source of ctx.cache.list({ resource: SECRETS })) copyInto(source, obj);
    } else {
      copyEverywhere(obj, ctx);
    }
  },

  onUpdate(oldObj, obj, ctx) {
    if (ctx.resource === SECRETS && util.diff(oldObj, obj).length > 0) copyEverywhere(obj, ctx);
  },

  onDelete(obj, ctx) {
    if (ctx.resource === SECRETS && obj) deleteCopies(obj);
  },
};

function copyEverywhere(source, ctx) {
  for (const ns of ctx.cache.list({ resource: NAMESPACES })) copyInto(source, ns);
}

function copyInto(source, ns) {
  const namespace = ns.metadata.name;
  if (namespace === source.metadata.namespace || ns.status.phase === "Terminating") return;
  const copy = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: source.metadata.name, namespace, annotations: { [REPLICA_OF]: sourceOf(source) } },
    type: source.type,
    data: source.data,
  };
  try {
    // Apply is create-or-update in one call; keys removed from the source leave the copy too.
    k8s.patch(SECRETS, namespace, copy.metadata.name, copy, { type: "apply" });
  } catch (e) {
    log.warn("secret not copied", { source: sourceOf(source), namespace, reason: e.reason || e.message });
  }
}

function deleteCopies(source) {
  // A field selector finds the same-named Secrets in all namespaces; the annotation tells ours.
  for (const s of k8s.list(SECRETS, { fieldSelector: `metadata.name=${source.metadata.name}` })) {
    if ((s.metadata.annotations || {})[REPLICA_OF] !== sourceOf(source)) continue;
    try {
      k8s.delete(SECRETS, s.metadata.namespace, s.metadata.name);
    } catch (e) {
      if (e.reason !== "NotFound") throw e;
    }
  }
}

function sourceOf(secret) {
  return `${secret.metadata.namespace}/${secret.metadata.name}`;
}
