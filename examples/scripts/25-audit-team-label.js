// 25 — audit: which Deployments in staging already lack a `team` label.
//
// Example 21 refuses a new Deployment without a team; it says nothing of those created before
// the policy. `admission.audit` runs the same `validate` over every Deployment of the watch
// already in the cluster, again whenever one changes, and publishes the results as an
// openreports.io Report per namespace (`kubectl get reports -n staging`, name
// jsinformer-25-audit-team-label-js; docs/admission.md, "Audit"). With `mode: "audit"` the
// webhook refuses nothing either: the policy is observed before it is enforced. Once the report
// is clean, drop the mode and new Deployments are refused too, while the audit keeps watching
// the old ones.
export default {
  watch: { resource: "apps/v1/deployments", namespace: "staging" },

  validate(d, ctx) {
    if (!d.metadata.labels?.team) {
      // ctx.operation is "AUDIT" for the objects already there, "CREATE"/"UPDATE" for requests.
      const when = ctx.operation === "AUDIT" ? "has" : "would have";
      return { allowed: false, message: `deployment ${d.metadata.name} ${when} no "team" label` };
    }
  },

  admission: { audit: true, mode: "audit" },
};
