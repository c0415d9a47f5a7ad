// Tests of 13-schedule-report.js, run offline by `runner test`: h.advance moves the virtual
// clock, and the schedule runs at each due time along the way.
function deployment(namespace, name, labels = {}) {
  return {
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name, namespace, labels },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    },
  };
}

test("reports deployments per namespace every minute", () => {
  const h = harness("./13-schedule-report.js", { objects: [deployment("web", "a"), deployment("web", "b"), deployment("ops", "c")] });
  expect(h.logs).toHaveLength(0); // nothing before the first minute
  h.advance("3m");
  const reports = h.logs.filter((l) => l.message === "deployments per namespace");
  expect(reports).toHaveLength(3);
  expect(JSON.parse(reports[0].counts)).toEqual({ ops: 1, web: 2 });
});

test("the nightly job runs at 03:00", () => {
  const h = harness("./13-schedule-report.js", {
    now: "2026-12-01T02:59:30Z",
    objects: [deployment("web", "a", { team: "payments" }), deployment("web", "b")],
  });
  h.advance("1m");
  expect(h.logs.filter((l) => l.message.startsWith("nightly"))).toEqual([
    { level: "info", message: "nightly: deployments without a team", count: 1 },
  ]);
});
