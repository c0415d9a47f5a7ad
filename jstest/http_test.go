package jstest_test

import "testing"

// h.http through test files: each test file asserts in JS.

const declaredNet = `
export default {
  watch: "v1/configmaps",
  net: ["api.example.invalid", "hooks.example.invalid:8443"],
  async onAdd(cm) {
    await fetch(cm.data.url);
  },
};`

// A host outside the script's net declaration is refused offline with the runner's error,
// before any route is consulted: the route below would answer it, and records nothing.
func TestHTTPEnforcesNetDeclaration(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": declaredNet, "h.test.js": `
const cm = (name, url) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { url } });

test("outside the declaration", () => {
  const h = harness("./p.js");
  h.http.route("*", "*", () => "answered");
  h.add(cm("out", "https://other.invalid/x?token=secret"));
  expect(h.http.requests).toEqual([]);
  expect(h.errors).toHaveLength(1);
  expect(h.errors[0].error).toContain("fetch GET other.invalid: connection to host other.invalid:443 refused: not in the script's net declaration (allow it with --allow-net)");
  expect(h.errors[0].error).not.toContain("secret");
});

test("inside the declaration", () => {
  const h = harness("./p.js");
  h.http.route("GET", "https://api.example.invalid/*", () => "ok");
  h.add(cm("in", "https://api.example.invalid/v1"));
  expect(h.errors).toEqual([]);
  expect(h.http.requests).toHaveLength(1);
});

test("a port the declaration does not name", () => {
  const h = harness("./p.js");
  h.http.route("*", "*", () => "answered");
  h.add(cm("port", "https://hooks.example.invalid/v1"));
  expect(h.http.requests).toEqual([]);
  expect(h.errors[0].error).toContain("host hooks.example.invalid:443 refused: not in the script's net declaration");
});
`})
}

const postsOnAdd = `
export default {
  watch: "v1/configmaps",
  async onAdd(cm) {
    const r = await fetch("https://hooks.example.invalid/added", { method: "POST", body: cm.metadata.name });
    if (!r.ok) throw new Error("status " + r.status);
  },
};`

// harness({http: {routes}}) adds routes before the plugin starts, so a request an initial
// add makes is answered instead of failing harness().
func TestHTTPRoutesBeforeInitialList(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": postsOnAdd, "h.test.js": `
const cm = (name) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } });

test("answered", () => {
  let calls = 0;
  const h = harness("./p.js", { objects: [cm("a"), cm("b")], http: { routes: [
    ["POST", "https://hooks.example.invalid/*", () => { calls++; return { status: 204 }; }],
    ["POST", /added$/, () => { calls++; return ""; }],
  ] } });
  expect(calls).toBe(2);
  expect(h.errors).toEqual([]);
  expect(h.http.requests.map((r) => r.body)).toEqual(["a", "b"]);
  h.http.route("POST", "*", () => ({ status: 500 }));
  h.add(cm("c"));
  expect(h.errors).toHaveLength(1);
});

test("without them harness() fails", () => {
  expect(() => harness("./p.js", { objects: [cm("a")] })).toThrow("no h.http.route answers: POST https://hooks.example.invalid/added");
});

test("a malformed entry", () => {
  expect(() => harness("./p.js", { http: { routes: [["GET", "*"]] } })).toThrow("http.routes: entry 0: want [method, url, handler]");
  expect(() => harness("./p.js", { http: { routes: [["GET", "*", 5]] } })).toThrow("entry 0: the handler must be a function");
  expect(() => harness("./p.js", { http: { route: [] } })).toThrow("unknown option 'route'");
});
`})
}
