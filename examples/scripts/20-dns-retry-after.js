// 20 — register each Ingress host with an external DNS API, honouring its rate limit.
//
// reconcile PUTs a record per host of the Ingress to the API. fetch never retries by itself:
// on 429 the API says when to come back (Retry-After), and util.retryAfter turns that into
// {requeueAfter}; a 5xx throws, and the workqueue retries the key with backoff (maxRetries).
// The API token is read from a Secret with k8s.get (a Secret mounted into the runner's pod
// works too: docs/scripts.md). Run with --allow-net dns-api.example.com.
const API = "https://dns-api.example.com/v1/records";

export default {
  watch: "networking.k8s.io/v1/ingresses",
  net: ["dns-api.example.com"],
  maxRetries: 5,

  async reconcile(key, ctx) {
    const [namespace, name] = key.split("/");
    const ing = ctx.cache.get(namespace, name);
    if (!ing) return; // deleting records is left out of this example
    const token = util.base64Decode(k8s.get("v1/secrets", "jsinformer", "dns-api").data.token);
    for (const rule of ing.spec.rules ?? []) {
      if (!rule.host) continue;
      const res = await fetch(`${API}/${encodeURIComponent(rule.host)}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ type: "CNAME", target: "ingress.example.com", owner: key }),
      });
      if (res.status === 429) return { requeueAfter: util.retryAfter(res, 10_000) };
      if (!res.ok) throw new Error(`DNS API answered ${res.status} for ${rule.host}`);
    }
    log.info("dns records registered", { ingress: key });
  },
};
