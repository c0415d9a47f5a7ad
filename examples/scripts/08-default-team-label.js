// 08 — every Deployment gets a `team` label: those without one are labelled `team: unassigned`,
// so they show up in `kubectl get deploy -A -l team=unassigned` until someone claims them.
//
// The watch's label selector "!team" (set-based: "has no team label") runs on the server: the
// script only ever sees Deployments that lack the label, and a Deployment leaves the watch as
// soon as it is labelled.
const DEPLOYMENTS = "apps/v1/deployments";

export default {
  watch: { resource: DEPLOYMENTS, labelSelector: "!team" },

  onAdd: addTeamLabel,
  onUpdate: (oldD, d) => addTeamLabel(d),
};

function addTeamLabel(d) {
  const { namespace, name, resourceVersion } = d.metadata;
  try {
    // With resourceVersion in it the patch only applies to the version we saw: if someone
    // changed the Deployment meanwhile (perhaps giving it a team), the server answers Conflict
    // instead of overwriting their label.
    k8s.patch(DEPLOYMENTS, namespace, name, { metadata: { resourceVersion, labels: { team: "unassigned" } } });
    log.info("labelled deployment", { deployment: `${namespace}/${name}`, team: "unassigned" });
  } catch (e) {
    // A newer version that still lacks the label arrives as an update and is labelled then.
    if (e.reason !== "Conflict") throw e;
  }
}
