// Uses every declaration of jsinformer-test.d.ts as a test file would. tsc checks it beside
// the examples (TestTypeScriptExamplesTypeCheck) and `runner test` runs it
// (TestTypedTestFilePasses): what is declared compiles, and works.
import type { Deployment } from "./resources";

const configMap = (name: string, labels?: { [key: string]: string }): HarnessObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "typed", labels },
  data: { a: "1" },
});

const flags: HarnessFlags = { gvr: ["cm"], namespace: "typed", selector: "", fieldSelector: "", dryRun: false, handlerTimeout: "2s", allowNet: ["hooks.example.invalid"] };
const options: HarnessOptions = { objects: [configMap("seed"), "typed-fixtures.yaml"], flags, now: "2030-01-01T00:00:00Z" };

describe("the harness", () => {
  let started = 0;
  beforeEach(() => {
    started++;
  });
  afterEach(async () => {
    await Promise.resolve();
  });

  test("writes, reads, and what the plugin sent", () => {
    const h: Harness = harness("./typed-plugin.ts", options);
    expect(h.logs.map((l: HarnessLog) => l.name).sort()).toEqual(["from-file", "seed"]);
    const added = h.add(configMap("one"));
    expect(added.metadata.uid).toBeDefined();
    const sent: HarnessWrite = h.writes[0];
    expect(sent).toMatchObject({ verb: "patch", resource: "v1/configmaps", namespace: "typed", name: "one", patchType: "merge", dryRun: false });
    expect(sent.error).toBeUndefined();
    const warned: string[] = sent.warnings;
    expect(warned).toEqual([]);

    const one = h.get("v1/configmaps", "typed", "one");
    if (one === null) {
      throw new Error("one is gone");
    }
    expect(one.metadata.labels?.seen).toBe("yes");
    one.data.a = "2";
    expect(h.update(one).data.a).toBe("2");
    const type: HarnessPatchType = "json";
    expect(h.patch("cm", "typed", "one", [{ op: "replace", path: "/data/a", value: "3" }], { type }).data.a).toBe("3");
    expect(h.patch("v1/configmaps", "typed", "one", '{"data":{"a":"4"}}').data.a).toBe("4");
    h.delete(one);
    h.delete("v1/configmaps", "typed", "seed");
    const listed: HarnessListOptions = { namespace: "typed", labelSelector: "", fieldSelector: "metadata.name!=kube-root-ca.crt" };
    expect(h.list("v1/configmaps", listed).map((cm) => cm.metadata.name)).toEqual(["from-file"]);
    expect(h.get<Deployment>("apps/v1/deployments", "typed", "none")).toBeNull();

    h.add(configMap("bad"));
    const failure: HarnessError = h.errors[0];
    expect(failure).toMatchObject({ level: "error", handler: "onAdd", resource: "v1/configmaps", object: "typed/bad" });
    expect(failure.error).toContain("a bad configmap");
  });

  test("the clock, and a recording", () => {
    const h = harness("./typed-plugin.ts", { flags: { gvr: "configmaps" }, now: "2030-06-01T00:00:00Z" });
    const within: HarnessDuration = "0s";
    h.settle();
    h.settle({ within });
    h.settle({ within: 1000 });
    h.advance("1m");
    h.advance(500);
    expect(h.now().toISOString()).toBe("2030-06-01T00:01:00.500Z");
    h.replay("typed-events.jsonl");
    expect(h.get("v1/configmaps", "typed", "recorded")?.data.a).toBe("2");
    expect(h.logs.filter((l) => l.message === "seen").map((l) => l.name)).toEqual(["recorded"]);
    const fromFile = h.add("typed-fixtures.yaml");
    expect(fromFile.map((o) => o.metadata.name)).toEqual(["from-file"]);
  });

  test("the matchers", () => {
    const e: Expectation = expect(started);
    e.toBeGreaterThan(2);
    const negated: Matchers = e.not;
    negated.toBeLessThan(3);
    expect(NaN).toBe(NaN);
    expect({ a: [1], b: undefined }).toEqual({ a: [1] });
    expect({ a: 1, b: { c: 2 } }).toMatchObject({ b: { c: 2 } });
    expect("abc").toHaveLength(3);
    expect([1, 2]).toContain(2);
    expect("abc").toContain("b");
    const boom = () => {
      throw new TypeError("boom");
    };
    expect(boom).toThrow();
    expect(boom).toThrow("oo");
    expect(boom).toThrow(/^bo+m$/);
    expect(boom).toThrow(TypeError);
    expect(() => undefined).not.toThrow();
    expect(1).toBeTruthy();
    expect("").toBeFalsy();
    expect(undefined).toBeUndefined();
    expect(null).toBeNull();
    expect(0).toBeDefined();
  });
});

const body: TestBody = async () => {
  await Promise.resolve();
  expect(it).toBe(test);
};
const alias: TestFunction = it;
alias("it is test", body);
test.skip("a skipped test", () => {
  throw new Error("not run");
});
test.skip("a skipped test without a body");
console.debug("typed-harness.test.ts declared its tests");
