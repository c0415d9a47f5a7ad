// 19 — post to a Slack-style webhook when a Deployment's rollout fails.
//
// A rollout has failed when the Deployment's Progressing condition turns False with reason
// ProgressDeadlineExceeded (spec.progressDeadlineSeconds passed without progress). The script
// posts once per failure: on the update that turns the condition, not on every later update,
// and not for Deployments already failed when the runner starts or the script reloads.
//
// The webhook URL is a credential: it comes from a Secret (key "url"), never from the script,
// and the runner logs only its host. Run with --allow-net hooks.slack.com; `net` below
// narrows this script to that host whatever else the runner allows. Try it:
//   kubectl -n jsinformer create secret generic slack-webhook --from-literal=url=https://hooks.slack.com/services/T0/B0/XXXX
const SECRET_NAMESPACE = "jsinformer";
const SECRET_NAME = "slack-webhook";

const failed = (d) =>
  (d.status?.conditions ?? []).some(
    (c) => c.type === "Progressing" && c.status === "False" && c.reason === "ProgressDeadlineExceeded",
  );

async function notify(d) {
  const secret = k8s.get("v1/secrets", SECRET_NAMESPACE, SECRET_NAME);
  const url = util.base64Decode(secret.data.url);
  const cond = d.status.conditions.find((c) => c.type === "Progressing");
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      text: `:rotating_light: rollout of ${d.metadata.namespace}/${d.metadata.name} failed: ${cond.message ?? cond.reason}`,
    }),
    signal: AbortSignal.timeout(5000),
  });
  // A failed post throws: the failure is logged and counted (jsinformer_handler_calls_total).
  if (!res.ok) throw new Error(`webhook answered ${res.status}`);
  log.info("rollout failure posted", { deployment: `${d.metadata.namespace}/${d.metadata.name}` });
}

export default {
  watch: "apps/v1/deployments",
  net: ["hooks.slack.com"],

  // A Deployment seen failing at start-up or after a reload was reported before (or before
  // the runner ran): only a change into failure posts.
  async onUpdate(oldObj, obj) {
    if (failed(obj) && !failed(oldObj)) await notify(obj);
  },
};
