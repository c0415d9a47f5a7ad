// 26 — post a failed rollout to a webhook exactly once, across restarts, reloads and replicas.
//
// 19-rollout-notifier.js posts from the handler, so it must skip the Deployments already failed
// at start-up (it cannot tell whether it posted them before the restart) and loses a post the
// webhook refused. Here the handler only sends a message to the outbox (docs/once.md), under
// an idempotency key naming the failure: the Deployment's uid and generation. The outbox keeps
// the key in the store, so the same failure seen again (every initial add after a restart or a
// reload, an update, the other replica after a hand-over) sends nothing, and deliver posts it
// on whichever replica claims it, again with backoff while the webhook fails. Needs --store.
//
// The webhook URL is a credential: it comes from a Secret (key "url"). Run with --store and
// --allow-net hooks.slack.com. Try it:
//   kubectl -n jsinformer create secret generic slack-webhook --from-literal=url=https://hooks.slack.com/services/T0/B0/XXXX
const SECRET_NAMESPACE = "jsinformer";
const SECRET_NAME = "slack-webhook";

const failure = (d) =>
  (d.status?.conditions ?? []).find(
    (c) => c.type === "Progressing" && c.status === "False" && c.reason === "ProgressDeadlineExceeded",
  );

function check(d, ctx) {
  const cond = failure(d);
  if (!cond) return;
  const key = `rollout-failed/${d.metadata.uid}/${d.metadata.generation}`;
  const text = `:rotating_light: rollout of ${d.metadata.namespace}/${d.metadata.name} failed: ${cond.message ?? cond.reason}`;
  // false when this failure was sent before, by this runner or another, before a restart or not.
  ctx.outbox.send(key, { text }, { about: d });
}

export default {
  watch: "apps/v1/deployments",

  // Initial adds too: a failure that happened while the runner was down is reported once.
  onAdd: check,
  onUpdate: (oldObj, obj, ctx) => check(obj, ctx),

  outbox: {
    attempts: 8, // then an Event OutboxDeliveryFailed on the Deployment, and a metric
    backoff: "10s", // 10s, 20s, 40s, ... at most maxBackoff
    maxBackoff: "10m",
    keep: "720h", // a failure is remembered 30 days

    // Runs on whichever replica claims the message; a throw is a failed attempt, retried.
    async deliver(message, ctx) {
      const secret = k8s.get("v1/secrets", SECRET_NAMESPACE, SECRET_NAME);
      const res = await fetch(util.base64Decode(secret.data.url), {
        method: "POST",
        // A delivery cut short by a crash is delivered again (ctx.delivery.interrupted): the
        // receiver drops the repeat by this key.
        headers: { "content-type": "application/json", "idempotency-key": ctx.delivery.key },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(5000),
      });
      if (!res.ok) throw new Error(`webhook answered ${res.status}`);
    },
  },
};
