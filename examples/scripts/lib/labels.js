// Label helpers shared by examples 09 and 10. Files under a lib/ folder are modules: plugins
// import them, the runner never loads them as plugins of their own. Saving this file reloads
// both examples, and only them.

/** The labels every workload must carry. */
export const REQUIRED = ["app.kubernetes.io/name", "team"];

/** "namespace/name", or "name" for a cluster-scoped object. */
export function keyOf(obj) {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

/** The owning team, from the `team` label; "unassigned" when there is none. */
export function teamOf(obj) {
  return obj.metadata.labels?.team || "unassigned";
}

/** The required labels obj lacks (missing or empty), in the order of REQUIRED. */
export function missingLabels(obj, required = REQUIRED) {
  const labels = obj.metadata.labels ?? {};
  return required.filter((key) => !labels[key]);
}
