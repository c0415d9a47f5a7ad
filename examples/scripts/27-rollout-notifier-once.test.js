// Tests of 27-rollout-notifier-once.js: h.http.route answers the webhook, h.outbox shows the
// outbox's records; nothing leaves the test.
const WEBHOOK = "https://hooks.slack.com/services/T0/B0/secret-token";

const secret = {
  apiVersion: "v1", kind: "Secret",
  metadata: { name: "slack-webhook", namespace: "jsinformer" },
  stringData: { url: WEBHOOK },
};

function deployment(conditions, replicas = 1) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name: "web", namespace: "shop" },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "main", image: "nginx" }] } },
    },
    status: { conditions },
  };
}

const progressing = { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" };
const stuck = { type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded", message: 'ReplicaSet "web-7d9" has timed out progressing.' };

test("a failed rollout is posted once, with its key as Idempotency-Key", () => {
  const h = harness("./27-rollout-notifier-once.js", { objects: [secret, deployment([progressing])] });
  h.http.route("POST", "https://hooks.slack.com/services/*", () => ({ status: 200, body: "ok" }));
  h.update(deployment([stuck]));
  h.update(deployment([stuck], 2)); // a new generation's failure is a new key
  h.update(deployment([stuck], 2)); // the same failure again: sent before, nothing posted
  const web = h.get("apps/v1/deployments", "shop", "web");
  expect(h.http.requests.map((r) => r.headers["idempotency-key"])).toEqual([
    `rollout-failed/${web.metadata.uid}/1`, `rollout-failed/${web.metadata.uid}/2`,
  ]);
  expect(JSON.parse(h.http.requests[0].body).text).toContain("rollout of shop/web failed");
  expect(h.outbox.list().map((r) => [r.state, r.attempts])).toEqual([["done", 1], ["done", 1]]);
  expect(h.errors).toEqual([]);
});

test("a Deployment already failed at start-up is posted, once", () => {
  const h = harness("./27-rollout-notifier-once.js", {
    objects: [secret, deployment([stuck])],
    http: { routes: [["POST", "https://hooks.slack.com/*", () => ({ status: 200 })]] },
  });
  h.update(deployment([stuck])); // a resync: the key is known
  expect(h.http.requests).toHaveLength(1);
});

test("a refused post is retried with backoff, then delivered", () => {
  const h = harness("./27-rollout-notifier-once.js", { objects: [secret, deployment([progressing])] });
  let up = false;
  h.http.route("POST", "https://hooks.slack.com/*", () => ({ status: up ? 200 : 500 }));
  h.update(deployment([stuck]));
  expect(h.http.requests).toHaveLength(1);
  expect(h.outbox.list()[0]).toMatchObject({ state: "pending", attempts: 1 });
  expect(h.outbox.list()[0].lastError).toContain("webhook answered 500");
  h.advance("9s");
  expect(h.http.requests).toHaveLength(1); // the first retry is 10s after the failure
  h.advance("1s");
  expect(h.http.requests).toHaveLength(2); // 500 again: next in 20s
  up = true;
  h.advance("20s");
  expect(h.http.requests).toHaveLength(3);
  expect(h.outbox.list()[0]).toMatchObject({ state: "done", attempts: 3 });
  expect(h.errors.map((e) => e.handler)).toEqual(["outbox.deliver", "outbox.deliver"]);
  // runner explain shows each attempt under the Deployment: its number, its request, its error.
  const attempts = h.explain("deploy", "shop/web").records.filter((r) => r.event === "deliver");
  expect(attempts.map((r) => [r.attempt, r.result, r.requests[0].status])).toEqual([[1, "error", 500], [2, "error", 500], [3, "ok", 200]]);
});

test("a message still refused after its attempts fails: a Warning Event on the Deployment", () => {
  const h = harness("./27-rollout-notifier-once.js", { objects: [secret, deployment([progressing])] });
  h.http.route("POST", "https://hooks.slack.com/*", () => ({ status: 503 }));
  h.update(deployment([stuck]));
  h.advance("1h");
  expect(h.http.requests).toHaveLength(8);
  expect(h.outbox.list()[0]).toMatchObject({ state: "failed", attempts: 8 });
  const events = h.writes.filter((w) => w.resource === "v1/events");
  expect(events.map((e) => [e.body.reason, e.body.type, e.body.involvedObject.name])).toEqual([["OutboxDeliveryFailed", "Warning", "web"]]);
  expect(events[0].body.message).toContain("failed after 8 attempts: ");
});
