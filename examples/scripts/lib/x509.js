// Reading a certificate's expiry in plain JavaScript, for example 16: scripts have no crypto
// module, but the one date needed sits at a fixed place in the certificate's DER encoding.

/** The notAfter of the first certificate of a PEM bundle, as a Date; null when unreadable. */
export function notAfter(pem) {
  const m = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem || "");
  if (!m) return null;
  try {
    const der = base64Bytes(m[1].replace(/\s+/g, ""));
    // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version?, serialNumber,
    //   signature, issuer, validity SEQUENCE { notBefore, notAfter }, ... }, ... }
    const tbs = children(der, header(der, 0))[0];
    let fields = children(der, tbs);
    if (der[fields[0].start] === 0xa0) fields = fields.slice(1); // the explicit version
    const [, notAfterTime] = children(der, fields[3]);
    return asn1Time(der, notAfterTime);
  } catch (e) {
    return null;
  }
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64Bytes(text) {
  const out = [];
  let bits = 0, value = 0;
  for (const c of text) {
    if (c === "=") break;
    const v = ALPHABET.indexOf(c);
    if (v < 0) throw new Error("not base64");
    value = (value << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >> bits) & 0xff);
    }
  }
  return out;
}

/** The element starting at start: its tag, where its content starts and ends. */
function header(der, start) {
  let len = der[start + 1], at = start + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[at++];
  }
  if (at + len > der.length) throw new Error("truncated");
  return { start, tag: der[start], content: at, end: at + len };
}

function children(der, el) {
  const out = [];
  for (let at = el.content; at < el.end; at = out[out.length - 1].end) out.push(header(der, at));
  return out;
}

/** UTCTime (YYMMDDHHMMSSZ, tag 0x17) or GeneralizedTime (YYYYMMDDHHMMSSZ, tag 0x18). */
function asn1Time(der, el) {
  const s = String.fromCharCode(...der.slice(el.content, el.end));
  const full = el.tag === 0x17 ? (Number(s.slice(0, 2)) < 50 ? "20" : "19") + s : s;
  const [y, mo, d, h, mi, sec] = [0, 4, 6, 8, 10, 12].map((i, k) => Number(full.slice(i, i + (k === 0 ? 4 : 2))));
  return new Date(Date.UTC(y, mo - 1, d, h, mi, sec));
}
