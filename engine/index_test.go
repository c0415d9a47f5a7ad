package engine_test

import (
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/inspection"
)

const indexScript = `export default {
  watch: { resource: "deployments", namespace: "NS" },
  indexers: {
    byImage: (d) => d.spec.template.spec.containers.map((c) => c.image),
    broken: (d) => { if (d.metadata.name === "bad") throw new Error("no index for bad"); return [d.metadata.name]; },
  },
  onAdd(d, ctx) { report(ctx); },
  onUpdate(o, d, ctx) { report(ctx); },
  onDelete(d, ctx) { report(ctx); },
};
function report(ctx) {
  log.info("index", {
    n127: ctx.cache.indexKeys("byImage", "nginx:1.27").join(","),
    n128: ctx.cache.byIndex("byImage", "nginx:1.28").map((d) => d.metadata.name).join(","),
    broken: ctx.cache.indexKeys("broken", "bad").length,
    good: ctx.cache.indexKeys("broken", "good").length,
  });
}
`

func TestIndexFollowsAddsUpdatesAndDeletes(t *testing.T) {
	t.Parallel()
	ns := uniqueName("idx")
	r := startEngine(t, map[string]string{"idx.js": strings.Replace(indexScript, "NS", ns, 1)}, nil)
	r.namespace(t, ns)
	r.create(t, deploymentsGVR, deployment(ns, "good", "nginx:1.27", 1))
	r.create(t, deploymentsGVR, deployment(ns, "bad", "nginx:1.27", 1))
	// What the handlers see of the index, as each call logs it.
	index := func(event, object string, attrs map[string]string) func(inspection.TraceRecord) bool {
		return call{Script: "idx.js", Event: event, Object: ns + "/" + object, Result: "ok", Logged: "index", Attrs: attrs}.match
	}
	r.calls.waitFor(t, "both indexed by image", 1, index("add", "bad", map[string]string{"n127": ns + "/bad," + ns + "/good", "good": "1", "broken": "0"}))
	r.patch(t, deploymentsGVR, ns, "good", `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.28"}]}}}}`)
	moved := map[string]string{"n127": ns + "/bad", "n128": "good"}
	r.calls.waitFor(t, "good moved to 1.28", 1, index("update", "good", moved))
	r.patch(t, deploymentsGVR, ns, "bad", `{"metadata":{"labels":{"touched":"yes"}}}`)
	r.calls.waitFor(t, "update of bad handled", 1, index("update", "bad", moved))
	r.delete(t, deploymentsGVR, ns, "bad")
	r.calls.waitFor(t, "bad gone", 1, index("delete", "bad", map[string]string{"n127": "", "n128": "good"}))
	// Index failures have no call of their own: the one ERROR per object is the behaviour.
	fails := r.log.find(msg("script handler failed", "handler", "indexers.broken"))
	if len(fails) != 1 {
		t.Fatalf("index failure logged %d times, want once per object\n%s", len(fails), r.log.dump())
	}
}
