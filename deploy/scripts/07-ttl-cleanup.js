// 07 — delete ConfigMaps and Jobs whose `jsinformer.io/ttl` annotation has expired.
//
// The annotation is either a duration counted from the object's creation ("30s", "10m",
// "1h30m", "7d") or an RFC 3339 expiry time ("2030-01-01T00:00:00Z"). An object not yet
// expired is looked at again when it expires: reconcile returns { requeueAfter }. Try it:
//   kubectl -n demo-a annotate configmap app-config jsinformer.io/ttl=30s
const TTL = "jsinformer.io/ttl";
const RESOURCES = ["v1/configmaps", "batch/v1/jobs"];

export default {
  watch: RESOURCES,

  // Every event enqueues its object's key ("namespace/name"). A key does not say which
  // resource it names, so look it up in each.
  reconcile(key, ctx) {
    const [namespace, name] = key.split("/");
    let wait = Infinity;
    for (const resource of RESOURCES) {
      const obj = ctx.cache.get(namespace, name, resource);
      const ttl = obj && (obj.metadata.annotations || {})[TTL];
      if (!ttl) continue;
      const left = expiry(obj, ttl) - Date.now();
      if (isNaN(left)) {
        log.warn("ignoring a ttl that is neither a duration nor a time", { resource, object: key, ttl });
      } else if (left > 0) {
        wait = Math.min(wait, left);
      } else {
        log.info("ttl expired; deleting", { resource, object: key, ttl });
        deleteIfPresent(resource, namespace, name);
      }
    }
    if (wait !== Infinity) return { requeueAfter: wait }; // milliseconds
  },
};

// expiry is when obj expires, in milliseconds since the epoch; NaN when ttl makes no sense.
function expiry(obj, ttl) {
  const duration = durationMs(ttl);
  if (!isNaN(duration)) return Date.parse(obj.metadata.creationTimestamp) + duration;
  // Only a full date-time: Date.parse would also accept "5", a forgotten unit, as a year.
  return /^\d{4}-\d\d-\d\dT/.test(ttl) ? Date.parse(ttl) : NaN;
}

const UNITS = { ms: 1, s: 1000, m: 60 * 1000, h: 3600 * 1000, d: 24 * 3600 * 1000 };

// durationMs parses "90s", "1h30m", "7d" into milliseconds; NaN when ttl is not a duration.
function durationMs(ttl) {
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(ttl)) return NaN;
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
  let total = 0;
  for (let m = part.exec(ttl); m; m = part.exec(ttl)) total += Number(m[1]) * UNITS[m[2]];
  return total;
}

function deleteIfPresent(resource, namespace, name) {
  try {
    // Background: a Job's pods are garbage-collected after it.
    k8s.delete(resource, namespace, name, { propagationPolicy: "Background" });
  } catch (e) {
    if (e.reason !== "NotFound") throw e; // anything else: reconcile retries with backoff
  }
}
