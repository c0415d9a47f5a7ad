// 11 — an npm package: flag Deployments running an image older than a minimum version.
//
// `semver` comes from node_modules in the scripts folder: run `npm install` there first
// (package.json pins it). Pure-JavaScript packages work; Node.js built-ins (fs, net, ...) do not.
import semver from "semver";

// Minimum versions by image name (the last path segment, without the tag).
const MINIMUM = { nginx: "1.25.0", redis: "7.2.0", postgres: "15.0.0" };

export default {
  watch: "apps/v1/deployments",

  onAdd: audit,
  onUpdate(oldD, d) {
    if (images(oldD) !== images(d)) audit(d);
  },
};

function audit(d) {
  for (const c of d.spec.template.spec.containers) {
    const { name, tag } = parseImage(c.image);
    const version = semver.coerce(tag); // "1.24-alpine" -> 1.24.0; "latest" -> null
    if (MINIMUM[name] && version && semver.lt(version, MINIMUM[name])) {
      log.warn("outdated image", {
        deployment: `${d.metadata.namespace}/${d.metadata.name}`,
        image: c.image,
        version: version.version,
        minimum: MINIMUM[name],
      });
    }
  }
}

// "registry:5000/library/nginx:1.24@sha256:..." -> { name: "nginx", tag: "1.24" }
function parseImage(image) {
  const path = image.split("@")[0];
  const slash = path.lastIndexOf("/");
  const colon = path.indexOf(":", slash + 1);
  return colon < 0
    ? { name: path.slice(slash + 1), tag: "latest" }
    : { name: path.slice(slash + 1, colon), tag: path.slice(colon + 1) };
}

function images(d) {
  return d.spec.template.spec.containers.map((c) => c.image).join(",");
}
