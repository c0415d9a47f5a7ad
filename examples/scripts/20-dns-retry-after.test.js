// Tests of 20-dns-retry-after.js: a rate-limited API, answered by h.http.route, on the
// virtual clock.
const secret = {
  apiVersion: "v1", kind: "Secret",
  metadata: { name: "dns-api", namespace: "jsinformer" },
  stringData: { token: "t0ken" },
};

const ingress = {
  apiVersion: "networking.k8s.io/v1", kind: "Ingress",
  metadata: { name: "shop", namespace: "web" },
  spec: { rules: [{ host: "shop.example.com", http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "shop", port: { number: 80 } } } }] } }] },
};

test("a 429 is retried after Retry-After, and only then", () => {
  let calls = 0;
  const h = harness("./20-dns-retry-after.js", { objects: [secret] });
  h.http.route("PUT", "https://dns-api.example.com/v1/records/*", () =>
    ++calls === 1 ? { status: 429, headers: { "retry-after": "30" } } : { status: 200, body: { ok: true } });
  h.add(ingress);
  expect(h.http.requests).toHaveLength(1);
  expect(h.http.requests[0].headers.authorization).toBe("Bearer t0ken");
  h.advance("29s");
  expect(h.http.requests).toHaveLength(1);
  h.advance("1s");
  expect(h.http.requests).toHaveLength(2);
  expect(h.logs).toEqual([{ level: "info", message: "dns records registered", ingress: "web/shop" }]);
});

test("a 5xx throws and the workqueue retries with backoff", () => {
  let calls = 0;
  const h = harness("./20-dns-retry-after.js", { objects: [secret] });
  h.http.route("PUT", "https://dns-api.example.com/*", () => (++calls <= 2 ? { status: 503 } : { status: 204 }));
  h.add(ingress);
  h.settle();
  expect(calls).toBe(3);
  expect(h.errors.map((e) => e.level)).toEqual(["warn", "warn"]);
  expect(h.errors[0].error).toContain("DNS API answered 503 for shop.example.com");
});

test("an unrouted request fails the test naming it", () => {
  const h = harness("./20-dns-retry-after.js", { objects: [secret] });
  expect(() => h.add(ingress)).toThrow("no h.http.route answers: PUT https://dns-api.example.com/v1/records/shop.example.com");
});

test("an API that hangs times out at --fetch-timeout, and the workqueue retries", () => {
  let calls = 0;
  const h = harness("./20-dns-retry-after.js", { objects: [secret] });
  // The first request is never answered; the retry is answered at once.
  h.http.route("PUT", "https://dns-api.example.com/*", () => (++calls === 1 ? { delay: Infinity } : { status: 200 }));
  h.add(ingress);
  expect(h.http.requests).toHaveLength(1);
  expect(h.errors).toEqual([]);
  h.advance("10s"); // the request timeout (10s by default), on the virtual clock
  expect(h.errors).toHaveLength(1);
  expect(h.errors[0].error).toContain("fetch PUT dns-api.example.com: timed out after 10s (--fetch-timeout)");
  h.advance("1s"); // the first retry's backoff
  expect(h.http.requests).toHaveLength(2);
  expect(h.logs).toEqual([{ level: "info", message: "dns records registered", ingress: "web/shop" }]);
});
