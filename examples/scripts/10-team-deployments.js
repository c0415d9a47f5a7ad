// 10 — Deployments per team, through an index keyed by the helper example 09 uses too.
//
// CommonJS `require` works as well as `import`, also for an ES module such as lib/labels.js.
const { keyOf, teamOf } = require("./lib/labels.js");

module.exports = {
  watch: "apps/v1/deployments",

  indexers: {
    byTeam: (d) => [teamOf(d)],
  },

  onAdd(d, ctx) {
    if (!ctx.isInInitialList) report(teamOf(d), ctx);
  },

  onUpdate(oldD, d, ctx) {
    const before = teamOf(oldD);
    const after = teamOf(d);
    if (before === after) return;
    report(before, ctx); // the team it left
    report(after, ctx);
  },

  onDelete(d, ctx) {
    report(teamOf(d), ctx);
  },
};

function report(team, ctx) {
  const deployments = ctx.cache.byIndex("byTeam", team).map(keyOf).sort();
  log.info("team deployments", { team, count: deployments.length, deployments: deployments.join(",") });
}
