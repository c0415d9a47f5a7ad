// Tests of 16-tls-expiry-metric.js: h.metrics() scrapes the plugin, running its collect now,
// on the virtual clock (Date.now() in the plugin is h.now()).

// Two self-signed certificates, expiring on 2030-01-31 and 2030-01-04T12:00Z.
const EXPIRES_JAN_31 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJRRENCNTZBREFnRUNBZ0VCTUFvR0NDcUdTTTQ5QkFNQ01Cb3hHREFXQmdOVkJBTVREM2RsWWk1bGVHRnQKY0d4bExtTnZiVEFlRncweU9URXlNREV3TURBd01EQmFGdzB6TURBeE16RXdNREF3TURCYU1Cb3hHREFXQmdOVgpCQU1URDNkbFlpNWxlR0Z0Y0d4bExtTnZiVEJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEEwSUFCTkRxCktGN3RYZi9tYXkyRHpRVDd5ZTNCV3pSYUNtZ08yaUU2UXI4TWRGNTRNYW9jOVdpL3F3eVMxZGJXdzZMbTl4NW8KMmVLWXFLUGhoa3ZHOWZhcFNTZWpIakFjTUJvR0ExVWRFUVFUTUJHQ0QzZGxZaTVsZUdGdGNHeGxMbU52YlRBSwpCZ2dxaGtqT1BRUURBZ05JQURCRkFpQXRtZmFlZ1hKbnNiV1VDRUtRaEdwU1ZJNVVwdkI4TmpBZFlQamY2MEdrCmp3SWhBTHNkMFRYb2xxY3N0Ny9qVEtUcnRwSEFtUkZFdzAvM0pzSDM1K0lzWFhTQgotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==";
const EXPIRES_JAN_4 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJRVENCNTZBREFnRUNBZ0VDTUFvR0NDcUdTTTQ5QkFNQ01Cb3hHREFXQmdOVkJBTVREM2RsWWk1bGVHRnQKY0d4bExtTnZiVEFlRncweU9URXlNREV3TURBd01EQmFGdzB6TURBeE1EUXhNakF3TURCYU1Cb3hHREFXQmdOVgpCQU1URDNkbFlpNWxlR0Z0Y0d4bExtTnZiVEJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEEwSUFCSHhHCndPL3hsNmhMdGpKbzhxQU1WRU81V1lsdFp5eS8rMFV6Vm0rcFdIVVgyNzlHQkZENmhrTE5jaHlxZDhlRVNvOEsKS095Njl0ZkNmRkdlbEsvREkyZWpIakFjTUJvR0ExVWRFUVFUTUJHQ0QzZGxZaTVsZUdGdGNHeGxMbU52YlRBSwpCZ2dxaGtqT1BRUURBZ05KQURCR0FpRUE1YlNuYnIwSWdWaVcxKzcrQWxzWEJ6eEc1cDZQY0NlZVNtTXhySzh6CkRZUUNJUUQxZkFTNWZTRUdPUkZlUXVQTUFKblJyZ2VXS2t3NytGY1ZOZUlGaHpwYmh3PT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";

function tlsSecret(name, crt) {
  return {
    apiVersion: "v1", kind: "Secret", type: "kubernetes.io/tls",
    metadata: { name, namespace: "web" },
    data: { "tls.crt": crt, "tls.key": "" },
  };
}

test("days until each certificate expires", () => {
  const h = harness("./16-tls-expiry-metric.js", {
    now: "2030-01-01T00:00:00Z",
    objects: [tlsSecret("site", EXPIRES_JAN_31), tlsSecret("api", EXPIRES_JAN_4)],
  });
  expect(h.metrics("tls_secret_expiry_days")).toEqual([
    { name: "tls_secret_expiry_days", labels: { namespace: "web", name: "api" }, value: 3.5 },
    { name: "tls_secret_expiry_days", labels: { namespace: "web", name: "site" }, value: 30 },
  ]);
  h.advance("240h");
  expect(h.metrics().map((s) => s.value)).toEqual([-6.5, 20]);
});

test("a broken Secret reads -1; a deleted one leaves no series", () => {
  const h = harness("./16-tls-expiry-metric.js", {
    objects: [tlsSecret("broken", "bm90IGEgY2VydGlmaWNhdGU=" /* "not a certificate" */), tlsSecret("site", EXPIRES_JAN_31)],
  });
  expect(h.metrics()[0]).toEqual({ name: "tls_secret_expiry_days", labels: { namespace: "web", name: "broken" }, value: -1 });
  h.delete("v1/secrets", "web", "broken");
  expect(h.metrics().map((s) => s.labels.name)).toEqual(["site"]);
});

test("only TLS Secrets are watched", () => {
  const h = harness("./16-tls-expiry-metric.js", {
    objects: [{ apiVersion: "v1", kind: "Secret", type: "Opaque", metadata: { name: "db", namespace: "web" }, data: {} }],
  });
  expect(h.metrics()).toEqual([]);
  expect(h.metricsText()).toBe("");
});
