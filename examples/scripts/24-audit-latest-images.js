// 24 — an admission policy rolled out in audit mode: images must be pinned (no `:latest`, no
// missing tag), but for now nothing is refused.
//
// mode "audit" allows every request and only records what would have been denied: the log
// line "admission audited", jsinformer_admission_decisions_total{outcome="audited"} and
// h.admit's outcome in tests. Once nothing is audited any more, switch to "warn" (kubectl prints
// a warning) and then to "enforce". failurePolicy "Ignore": a policy on trial must never block.
const imagesOf = (d) => (d.spec?.template?.spec?.containers ?? []).map((c) => c.image ?? "");

// An image is pinned by a digest or a tag other than latest: "nginx:1.27", "nginx@sha256:...".
function pinned(image) {
  if (image.includes("@")) return true;
  const tag = image.slice(image.lastIndexOf("/") + 1).split(":")[1];
  return tag !== undefined && tag !== "latest";
}

export default {
  watch: "apps/v1/deployments",

  validate(d) {
    const unpinned = imagesOf(d).filter((image) => !pinned(image));
    if (unpinned.length > 0) {
      return { allowed: false, message: `unpinned images: ${unpinned.join(", ")}; use a version tag or a digest` };
    }
  },

  admission: { mode: "audit", failurePolicy: "Ignore" },
};
