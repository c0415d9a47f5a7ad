package jstest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// Paths in h.replay and objects may be absolute; a missing file's error says where it was
// looked for.
func TestReplayAndObjectsPaths(t *testing.T) {
	t.Parallel()
	abs := t.TempDir()
	for name, content := range map[string]string{"events.jsonl": recorded, "cms.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z, namespace: prod}\n"} {
		if err := os.WriteFile(filepath.Join(abs, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := runFile(t, "h.test.js", map[string]string{"p.js": recordingPlugin, "h.test.js": fmt.Sprintf(`
test("absolute paths", () => {
  const h = harness("./p.js", { objects: [%[1]q] });
  h.replay(%[2]q);
  expect(h.list("v1/configmaps", { namespace: "prod" }).map((c) => c.metadata.name)).toEqual(["a", "c", "z"]);
});
test("a missing recording", () => { harness("./p.js").replay("missing.jsonl"); });
test("a missing absolute fixture", () => { harness("./p.js", { objects: [%[3]q] }); });
`, filepath.Join(abs, "cms.yaml"), filepath.Join(abs, "events.jsonl"), filepath.Join(abs, "nope.yaml"))})
	if res.Error != "" || len(res.Tests) != 3 {
		t.Fatalf("file result %+v", res)
	}
	if f := res.Tests[0].Failure; f != nil {
		t.Errorf("absolute paths: %s", f)
	}
	for i, want := range []string{
		"h.replay: missing.jsonl: no such file (looked for " + filepath.Join(filepath.Dir(res.File), "missing.jsonl"),
		"objects[0]: " + filepath.Join(abs, "nope.yaml") + ": no such file",
	} {
		f := res.Tests[i+1].Failure
		if f == nil || !strings.Contains(f.String(), want) {
			t.Errorf("test %d failed with %v, want %q", i+2, f, want)
		}
	}
}
