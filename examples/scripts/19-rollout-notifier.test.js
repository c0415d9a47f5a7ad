// Tests of 19-rollout-notifier.js: h.http.route answers the webhook; nothing leaves the test.
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

test("posts once when a rollout fails, not on later updates", () => {
  const h = harness("./19-rollout-notifier.js", { objects: [secret, deployment([progressing])] });
  h.http.route("POST", "https://hooks.slack.com/services/*", () => ({ status: 200, body: "ok" }));
  h.update(deployment([stuck]));
  h.update(deployment([stuck], 2)); // still failing: no second message
  expect(h.http.requests).toHaveLength(1);
  const req = h.http.requests[0];
  expect(req.url).toBe(WEBHOOK);
  expect(req.headers["content-type"]).toBe("application/json");
  expect(JSON.parse(req.body).text).toContain("rollout of shop/web failed");
  expect(h.errors).toEqual([]);
  // runner explain (and tail) show the request next to the call's writes: method, host, path, status.
  const posted = h.explain("deploy", "shop/web").records.flatMap((r) => r.requests || []);
  expect(posted.map((q) => `${q.method} ${q.host} ${q.status}`)).toEqual(["POST hooks.slack.com 200"]);
});

test("a Deployment already failed at start-up is not reported again", () => {
  const h = harness("./19-rollout-notifier.js", { objects: [secret, deployment([stuck])] });
  h.update(deployment([stuck], 3));
  expect(h.http.requests).toHaveLength(0);
});

test("a webhook that refuses the post is a handler failure", () => {
  const h = harness("./19-rollout-notifier.js", { objects: [secret, deployment([progressing])] });
  h.http.route("POST", "https://hooks.slack.com/*", () => ({ status: 500 }));
  h.update(deployment([stuck]));
  expect(h.errors).toHaveLength(1);
  expect(h.errors[0].error).toContain("webhook answered 500");
});
