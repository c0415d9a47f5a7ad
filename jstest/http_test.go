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

// flags.allowNet applies the runner's --allow-net: a request it refuses in production fails
// in the test, with the runner's error naming the fix, before any route answers; without it,
// routes stand in for the network.
func TestHTTPAllowNetFlag(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": `
export default {
  watch: "v1/configmaps",
  async onAdd(cm) { await fetch(cm.data.url); },
};`, "h.test.js": `
const cm = (name, url) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { url } });

test("refused as in production", () => {
  const h = harness("./p.js", { flags: { allowNet: "hooks.example.invalid,10.0.0.0/8" } });
  h.http.route("*", "*", () => "answered");
  h.add(cm("out", "https://other.invalid/x"));
  h.add(cm("ip", "http://127.0.0.2/x"));
  expect(h.http.requests).toEqual([]);
  expect(h.errors).toHaveLength(2);
  expect(h.errors[0].error).toContain("fetch GET other.invalid: connection to host other.invalid:443 refused: not in --allow-net (allow it with the runner's --allow-net)");
  expect(h.errors[0].error).toContain("p.js:4:27: Error: fetch GET");
  expect(h.errors[1].error).toContain("connection to host 127.0.0.2:80 refused: not in --allow-net");
});

test("allowed, answered by the routes", () => {
  const h = harness("./p.js", { flags: { allowNet: ["hooks.example.invalid", "10.0.0.0/8"] } });
  h.http.route("*", "*", () => "answered");
  h.add(cm("in", "https://hooks.example.invalid/x"));
  h.add(cm("cidr", "http://10.1.2.3/x"));
  expect(h.errors).toEqual([]);
  expect(h.http.requests).toHaveLength(2);
});

test("nothing allowed by default, as the runner", () => {
  const h = harness("./p.js", { flags: { allowNet: [] } });
  h.add(cm("out", "https://hooks.example.invalid/x"));
  expect(h.errors).toHaveLength(1);
});

test("without the flag, routes stand in for the network", () => {
  const h = harness("./p.js");
  h.http.route("*", "*", () => "answered");
  h.add(cm("out", "https://other.invalid/x"));
  expect(h.errors).toEqual([]);
});

test("an invalid entry fails harness()", () => {
  expect(() => harness("./p.js", { flags: { allowNet: "a b" } })).toThrow("flags.allowNet");
});
`})
}

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
  expect(h.errors[0].error).toContain("fetch GET other.invalid: connection to host other.invalid:443 refused: not in the script's net declaration (add it to the script's net: [...]; the runner's --allow-net must allow it too)");
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

const fetchesOnAdd = `
export default {
  watch: "v1/configmaps",
  async onAdd(cm) {
    const init = cm.data && cm.data.signal ? { signal: AbortSignal.timeout(Number(cm.data.signal)) } : {};
    try {
      const r = await fetch("https://api.example.invalid/" + cm.metadata.name, init);
      log.info("answered", { status: r.status, at: Date.now() });
    } catch (e) {
      log.info("failed", { name: e.name, error: e.message });
    }
  },
};`

// A route's delay holds its answer on the virtual clock: the harness call returns while the
// request waits, and h.advance ends it at the request timeout or AbortSignal.timeout, or
// delivers the answer at its time, whichever comes first, exactly then.
func TestHTTPDelayedAnswersOnTheVirtualClock(t *testing.T) {
	t.Parallel()
	allPass(t, map[string]string{"p.js": fetchesOnAdd, "h.test.js": `
const cm = (name, data) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data });

test("an upstream that never answers times out at --fetch-timeout", () => {
  const h = harness("./p.js");
  h.http.route("GET", "*", () => ({ delay: Infinity }));
  h.add(cm("hang"));
  expect(h.http.requests).toHaveLength(1);
  h.advance("9999ms");
  expect(h.logs).toEqual([]);
  h.advance("1ms");
  expect(h.logs).toHaveLength(1);
  expect(h.logs[0].message).toBe("failed");
  expect(h.logs[0].error).toContain("fetch GET api.example.invalid: timed out after 10s (--fetch-timeout)");
});

test("AbortSignal.timeout fires on h.advance", () => {
  const h = harness("./p.js");
  h.http.route("GET", "*", () => ({ delay: "1h", status: 200 }));
  h.add(cm("slow", { signal: "2000" }));
  h.advance("1999ms");
  expect(h.logs).toEqual([]);
  h.advance("1ms");
  expect(h.logs).toEqual([{ level: "info", message: "failed", name: "TimeoutError", error: "fetch GET api.example.invalid: fetch timed out (AbortSignal.timeout)" }]);
});

test("an answer before the timeout is not aborted", () => {
  const h = harness("./p.js");
  const t0 = h.now().getTime();
  h.http.route("GET", "*", () => ({ delay: 3000, status: 201 }));
  h.add(cm("late", { signal: "5000" }));
  h.advance("2999ms");
  expect(h.logs).toEqual([]);
  h.advance("1h");
  expect(h.logs).toEqual([{ level: "info", message: "answered", status: 201, at: t0 + 3000 }]);
});

test("a delay that is not a duration fails the call", () => {
  const h = harness("./p.js");
  h.http.route("GET", "*", () => ({ delay: "soon" }));
  expect(() => h.add(cm("bad"))).toThrow("its route answered a delay \"soon\" that is not a duration");
});

test("a delay to a request of the initial list fails harness()", () => {
  expect(() => harness("./p.js", { objects: [cm("a")], http: { routes: [["GET", "*", () => ({ delay: "1s" })]] } }))
    .toThrow("add this route after harness()");
});
`})
}
