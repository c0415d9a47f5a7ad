// The assertion library of `runner test`, evaluated once per test file before it, with the
// host's helpers. It returns the globals it defines. Matchers follow Jest's: toBe is
// Object.is, toEqual is recursive equality that ignores undefined properties, toMatchObject
// checks a subset, .not negates.
(function (host) {
  "use strict";

  class AssertionError extends Error {
    constructor(matcher, message, details) {
      super(message);
      this.name = "AssertionError";
      this.matcher = matcher;
      Object.assign(this, details);
    }
  }

  const isObject = (v) => v !== null && typeof v === "object";
  const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

  // pretty renders a value for messages and diffs: sorted keys, one entry per line.
  function pretty(v, indent = "", seen = new Set()) {
    if (v === undefined) return "undefined";
    if (typeof v === "string") return JSON.stringify(v);
    if (typeof v === "function") return "[Function" + (v.name ? " " + v.name : "") + "]";
    if (!isObject(v)) return String(v);
    if (v instanceof Date) return "Date(" + (isNaN(v) ? "Invalid" : v.toISOString()) + ")";
    if (v instanceof RegExp) return String(v);
    if (v instanceof Error) return v.name + ": " + v.message;
    if (seen.has(v)) return "[Circular]";
    seen.add(v);
    const inner = indent + "  ";
    let out;
    if (Array.isArray(v)) {
      out = v.length === 0 ? "[]" : "[\n" + v.map((x) => inner + pretty(x, inner, seen) + ",").join("\n") + "\n" + indent + "]";
    } else {
      const keys = Object.keys(v).sort();
      out = keys.length === 0 ? "{}" : "{\n" + keys.map((k) =>
        inner + (identifier.test(k) ? k : JSON.stringify(k)) + ": " + pretty(v[k], inner, seen) + ",").join("\n") + "\n" + indent + "}";
    }
    seen.delete(v);
    return out;
  }

  // equals is toEqual's equality: recursive, undefined properties count as missing.
  function equals(a, b, seen = []) {
    if (Object.is(a, b)) return true;
    if (!isObject(a) || !isObject(b)) return false;
    if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
    if (a instanceof RegExp || b instanceof RegExp) return String(a) === String(b);
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    if (seen.some(([x, y]) => x === a && y === b)) return true;
    seen = seen.concat([[a, b]]);
    if (Array.isArray(a)) {
      return a.length === b.length && a.every((x, i) => equals(x, b[i], seen));
    }
    const keys = (o) => Object.keys(o).filter((k) => o[k] !== undefined);
    const ka = keys(a), kb = keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equals(a[k], b[k], seen));
  }

  // matches is toMatchObject's: every property of expected is in actual and matches,
  // recursively; arrays must have the same length, element by element.
  function matches(actual, expected) {
    if (!isObject(expected) || !isObject(actual) || expected instanceof Date || expected instanceof RegExp) {
      return equals(actual, expected);
    }
    if (Array.isArray(expected)) {
      return Array.isArray(actual) && actual.length === expected.length && expected.every((x, i) => matches(actual[i], x));
    }
    return Object.keys(expected).every((k) => k in Object(actual) && matches(actual[k], expected[k]));
  }

  // subset is the part of actual that toMatchObject compared, for its diff.
  function subset(actual, expected) {
    if (!isObject(actual) || !isObject(expected) || Array.isArray(actual) !== Array.isArray(expected)) return actual;
    if (Array.isArray(actual)) return actual.map((x, i) => (i < expected.length ? subset(x, expected[i]) : x));
    const out = {};
    for (const k of Object.keys(expected)) if (k in actual) out[k] = subset(actual[k], expected[k]);
    return out;
  }

  function expect(actual) {
    const make = (negate) => {
      const not = negate ? ".not" : "";
      const fail = (pass, matcher, expected, text, diffOf) => {
        if (pass !== negate) return;
        const header = "expect(received)" + not + "." + matcher + "(expected)";
        let message = header + "\n\n" + text;
        const details = { expected: pretty(expected), received: pretty(actual), diff: "" };
        if (!negate && diffOf) {
          const [e, r] = diffOf;
          const pe = pretty(e), pr = pretty(r);
          if (pe.includes("\n") || pr.includes("\n")) {
            details.diff = host.diff(pe, pr);
            message = header + "\n\n" + details.diff;
          }
        }
        throw new AssertionError(matcher, message, details);
      };
      const shown = (label, v) => label + ": " + pretty(v);
      const both = (expected) => (negate ? "Expected: not " + pretty(expected) : shown("Expected", expected)) + "\n" + shown("Received", actual);
      return {
        toBe(expected) {
          let text = both(expected);
          if (!negate && !Object.is(actual, expected) && equals(actual, expected)) {
            text += "\n\nThe values are equal but not the same object: use toEqual to compare contents.";
          }
          fail(Object.is(actual, expected), "toBe", expected, text, [expected, actual]);
        },
        toEqual(expected) {
          fail(equals(actual, expected), "toEqual", expected, both(expected), [expected, actual]);
        },
        toMatchObject(expected) {
          if (!isObject(actual) || !isObject(expected)) {
            throw new TypeError("toMatchObject: received and expected must be objects; received " + pretty(actual));
          }
          fail(matches(actual, expected), "toMatchObject", expected, both(expected), [expected, subset(actual, expected)]);
        },
        toHaveLength(n) {
          const len = actual === null || actual === undefined ? undefined : actual.length;
          if (typeof len !== "number") throw new TypeError("toHaveLength: received has no length: " + pretty(actual));
          fail(len === n, "toHaveLength", n, "Expected length" + (negate ? ": not " : ": ") + n + "\nReceived length: " + len + "\nReceived: " + pretty(actual));
        },
        toContain(item) {
          let pass;
          if (typeof actual === "string") pass = actual.includes(String(item));
          else if (actual !== null && actual !== undefined && typeof actual[Symbol.iterator] === "function") pass = [...actual].some((x) => Object.is(x, item) || x === item);
          else throw new TypeError("toContain: received is neither a string nor an array: " + pretty(actual));
          fail(pass, "toContain", item, shown(negate ? "Expected not to contain" : "Expected to contain", item) + "\n" + shown("Received", actual));
        },
        toThrow(expected) {
          if (typeof actual !== "function") throw new TypeError("toThrow: received must be a function, got " + pretty(actual));
          let thrown = null;
          try { actual(); } catch (e) { thrown = { value: e }; }
          const message = thrown && thrown.value && thrown.value.message !== undefined ? String(thrown.value.message) : thrown ? String(thrown.value) : "";
          let pass = thrown !== null, what = "a throw";
          if (thrown && typeof expected === "string") { pass = message.includes(expected); what = "a message containing " + JSON.stringify(expected); }
          else if (thrown && expected instanceof RegExp) { pass = expected.test(message); what = "a message matching " + String(expected); }
          else if (thrown && typeof expected === "function") { pass = thrown.value instanceof expected; what = "an instance of " + expected.name; }
          const got = thrown ? "Thrown: " + pretty(thrown.value) : "Received function did not throw";
          fail(pass, "toThrow", expected, (negate ? "Expected no " : "Expected ") + what + "\n" + got);
        },
        toBeTruthy() { fail(!!actual, "toBeTruthy", undefined, shown("Received", actual)); },
        toBeFalsy() { fail(!actual, "toBeFalsy", undefined, shown("Received", actual)); },
        toBeUndefined() { fail(actual === undefined, "toBeUndefined", undefined, shown("Received", actual)); },
        toBeNull() { fail(actual === null, "toBeNull", null, shown("Received", actual)); },
        toBeDefined() { fail(actual !== undefined, "toBeDefined", undefined, shown("Received", actual)); },
        toBeGreaterThan(n) { fail(actual > n, "toBeGreaterThan", n, both(n)); },
        toBeLessThan(n) { fail(actual < n, "toBeLessThan", n, both(n)); },
      };
    };
    const m = make(false);
    m.not = make(true);
    return m;
  }

  return { expect, AssertionError, pretty };
})
