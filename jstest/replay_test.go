package jstest_test

import (
	"testing"
)

// A hand-written recording: the initial list, then changes 30s and 2m apart.
const recorded = `{"time":"2026-03-01T10:00:00Z","type":"ADDED","initial":true,"resource":"v1/configmaps","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"prod","uid":"u-1","resourceVersion":"100","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"v":"1"}}}
{"time":"2026-03-01T10:00:00Z","type":"ADDED","initial":true,"resource":"v1/configmaps","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"prod","uid":"u-2","resourceVersion":"101"}}}
{"time":"2026-03-01T10:00:30Z","type":"MODIFIED","resource":"v1/configmaps","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"prod","uid":"u-1","resourceVersion":"102"},"data":{"v":"2"}}}
{"time":"2026-03-01T10:02:30Z","type":"DELETED","resource":"v1/configmaps","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"prod","uid":"u-2","resourceVersion":"103"}}}
{"time":"2026-03-01T10:02:30Z","type":"ADDED","resource":"v1/configmaps","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"prod","uid":"u-3","resourceVersion":"104","finalizers":["x/y"]}}}
`

const recordingPlugin = `
const at = () => new Date().toISOString().slice(11, 19);
export default {
  watch: "v1/configmaps",
  onAdd(cm, ctx) { log.info("add", { name: cm.metadata.name, initial: ctx.isInInitialList, at: at() }); },
  onUpdate(old, cm) { log.info("update", { name: cm.metadata.name, v: cm.data.v, at: at() }); },
  onDelete(cm) { log.info("delete", { name: cm.metadata.name, at: at() }); },
};`

func TestReplay(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": recordingPlugin, "events.jsonl": recorded, "h.test.js": `
const seen = (h) => h.logs.map((l) => [l.message, l.name, l.initial ?? l.v, l.at].filter((x) => x !== undefined).join(" "));

test("replay after start-up: the initial list arrives as live adds", () => {
  const h = harness("./p.js");
  h.replay("events.jsonl");
  expect(seen(h)).toEqual(["add a false 00:00:00", "add b false 00:00:00", "update a 2 00:00:30", "delete b 00:02:30", "add c false 00:02:30"]);
  expect(h.now().toISOString()).toBe("2030-01-01T00:02:30.000Z");
  expect(h.get("v1/configmaps", "prod", "c").metadata.finalizers).toEqual(["x/y"]);
});

test("objects: a recording seeds its initial list, replay applies the rest", () => {
  const h = harness("./p.js", { objects: ["events.jsonl"] });
  h.replay("events.jsonl");
  expect(seen(h)).toEqual(["add a true 00:00:00", "add b true 00:00:00", "update a 2 00:00:30", "delete b 00:02:30", "add c false 00:02:30"]);
});

test("a replay can be repeated: a recorded delete removes the object whatever its finalizers", () => {
  const h = harness("./p.js", { objects: ["events.jsonl"] });
  h.replay("events.jsonl");
  expect(() => h.replay("events.jsonl")).not.toThrow();
  expect(h.list("v1/configmaps", { namespace: "prod" }).map((c) => c.metadata.name)).toEqual(["a", "c"]);
});
`})
}
