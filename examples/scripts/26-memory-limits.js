// 26 — a policy enforced for new objects while audited for the old ones: every container of a
// Deployment sets a memory limit, in the namespaces that opted in.
//
// `mode` is the default "enforce": a Deployment created or updated without a limit is refused.
// `audit: true` also judges those already there, which the webhook never saw, and publishes
// them as a Report per namespace (`kubectl get reports -A`); fix one and its result turns to
// pass. `namespaceSelector` limits both to namespaces labelled
// `policy.example.com/memory-limits: required` (label a namespace to opt it in; the audit
// follows at once), and `excludeNamespaces` leaves out a namespace by name even when labelled.
const limitless = (d) =>
  (d.spec?.template?.spec?.containers ?? []).filter((c) => !c.resources?.limits?.memory).map((c) => c.name);

export default {
  watch: "apps/v1/deployments",

  validate(d, ctx) {
    const missing = limitless(d);
    if (missing.length > 0) {
      const verb = ctx.operation === "AUDIT" ? "runs" : "would run";
      return {
        allowed: false,
        message: `deployment ${d.metadata.name} ${verb} containers without a memory limit: ${missing.join(", ")}`,
      };
    }
  },

  admission: {
    audit: true,
    namespaceSelector: { matchLabels: { "policy.example.com/memory-limits": "required" } },
    excludeNamespaces: ["sandbox"],
  },
};
