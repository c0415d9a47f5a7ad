// 22 — admission: Deployments in prod run as non-root with the runtime's seccomp profile,
// unless they say otherwise.
//
// `mutate` returns a changed clone of the object (obj itself is read-only) or undefined for no
// change; the runner sends the API server the JSON Patch between the two. Only what is missing
// is filled in, so a Deployment that sets its own securityContext keeps it, and applying the
// same manifest again changes nothing.
const POD_DEFAULTS = { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } };

export default {
  watch: { resource: "apps/v1/deployments", namespace: "prod" },

  mutate(d) {
    const pod = d.spec?.template?.spec;
    if (!pod) return;
    const containers = pod.containers ?? [];
    const missingPod = !pod.securityContext;
    const missing = containers.filter((c) => c.securityContext?.allowPrivilegeEscalation === undefined);
    if (!missingPod && missing.length === 0) return; // already complete: no patch
    const out = util.clone(d);
    const spec = out.spec.template.spec;
    if (missingPod) spec.securityContext = POD_DEFAULTS;
    for (const c of spec.containers ?? []) {
      if (c.securityContext?.allowPrivilegeEscalation === undefined) {
        c.securityContext = { ...c.securityContext, allowPrivilegeEscalation: false };
      }
    }
    return out;
  },
};
