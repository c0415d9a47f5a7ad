// 16 — metrics: days until each TLS Secret's certificate expires, as a gauge.
//
// Computed at scrape time from the cache, like the Ready gauge of example 15; the parsing
// lives in a module (lib/x509.js). Alert on it in Prometheus, for example:
//   tls_secret_expiry_days < 14
// A Secret whose certificate cannot be read is reported with the value -1 rather than left
// out, so a broken Secret is visible too.
import { notAfter } from "./lib/x509.js";

const DAY = 24 * 60 * 60 * 1000;

export default {
  watch: { resource: "v1/secrets", fieldSelector: "type=kubernetes.io/tls" },
  metrics: {
    tls_secret_expiry_days: {
      type: "gauge",
      help: "Days until the certificate in a kubernetes.io/tls Secret expires (negative: expired; -1 also when unreadable)",
      labels: ["namespace", "name"],
      collect(ctx) {
        const now = Date.now();
        return ctx.cache.list().map((s) => {
          const expiry = notAfter(util.base64Decode(s.data?.["tls.crt"] || ""));
          return {
            labels: { namespace: s.metadata.namespace, name: s.metadata.name },
            value: expiry ? Math.floor(((expiry.getTime() - now) / DAY) * 10) / 10 : -1,
          };
        });
      },
    },
  },
};
