// 13 — schedules: a report every minute and a nightly job.
//
// A schedule runs on the script's worker like any handler (never beside another of its
// calls), only once the cache is complete, and with --leader-elect only on the leader. Each
// reload starts the schedule afresh.
const DEPLOYMENTS = "apps/v1/deployments";

export default {
  watch: DEPLOYMENTS,
  schedule: [
    {
      every: "1m",
      run(ctx) {
        const perNamespace = {};
        for (const d of ctx.cache.list()) {
          const ns = d.metadata.namespace;
          perNamespace[ns] = (perNamespace[ns] || 0) + 1;
        }
        log.info("deployments per namespace", { counts: JSON.stringify(perNamespace) });
      },
    },
    {
      cron: "0 3 * * *", // 03:00 every day, in the runner's time zone
      run(ctx) {
        const unlabelled = ctx.cache.list().filter((d) => !(d.metadata.labels || {}).team);
        log.info("nightly: deployments without a team", { count: unlabelled.length });
      },
    },
  ],
};
