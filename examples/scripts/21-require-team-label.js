// 21 — admission: every Deployment in prod names its team, or it is not admitted.
//
// Example 09 reports a missing label after the fact; `validate` refuses the request instead:
// `kubectl apply` prints the message and nothing is stored. Served as a webhook when the runner
// runs with --webhook-url or --webhook-service (docs/admission.md); without, it only loads.
// The watch is the webhook's scope: Deployments of the namespace prod, CREATE and UPDATE.
export default {
  watch: { resource: "apps/v1/deployments", namespace: "prod" },

  validate(d) {
    const team = d.metadata.labels?.team;
    if (!team) {
      return { allowed: false, message: `deployment ${d.metadata.name} needs a "team" label: who is on call for it?` };
    }
    if (team === "unassigned") {
      // Example 08's placeholder: let it through, but kubectl prints the warning.
      return { allowed: true, warnings: [`deployment ${d.metadata.name} has team "unassigned": claim it`] };
    }
  },

  admission: { operations: ["CREATE", "UPDATE"], failurePolicy: "Fail" },
};
