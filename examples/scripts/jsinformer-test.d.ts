// Type declarations for the test files of `runner test` (*.test.ts, *.test.js): the globals
// test, it, describe, beforeEach, afterEach, expect and harness (and console, declared in
// jsinformer.d.ts: in test files it prints to standard error). Written by `runner types` next
// to jsinformer.d.ts, whose KubeObject and ObjectMeta it uses; see docs/testing.md.
//
// These globals exist only in test files, and log, util, k8s and defineScript only in plugins:
// TypeScript declares globals for a whole program, so a tsconfig.json that includes both files
// lets a plugin name expect, or a test k8s, without complaint (runner test fails when that
// line runs).

/// <reference path="./jsinformer.d.ts" />

/**
 * A test's (or a hook's) body, called without arguments: it fails when it throws, or returns a
 * promise that rejects or is still pending when it returns (there are no timers; harness calls
 * are synchronous). Any other value it returns is ignored.
 */
type TestBody = () => unknown;

interface TestFunction {
  /** Declares a test; tests run one after the other, in the order they are declared. */
  (name: string, fn: TestBody): void;
  /** Declares a test that is reported as skipped and not run. */
  skip(name: string, fn?: TestBody): void;
}

/**
 * Jest's matchers. A failed one throws an assertion error: the test fails with the expected
 * and received values (a line diff when they span several lines) at the assertion's position.
 */
interface Matchers {
  /** Object.is(received, expected). */
  toBe(expected: unknown): void;
  /** Recursive equality; properties whose value is undefined count as absent. */
  toEqual(expected: unknown): void;
  /** Every property of expected is in received with a matching value, recursively (arrays element by element, same length). */
  toMatchObject(expected: object): void;
  /** received.length === length. */
  toHaveLength(length: number): void;
  /** An array (or any iterable) holds item (Object.is), or a string contains it. */
  toContain(item: unknown): void;
  /**
   * received is a function that throws; expected may be a substring of the message, a
   * regular expression it matches, or the error's class.
   */
  toThrow(expected?: string | RegExp | (abstract new (...args: any[]) => unknown)): void;
  toBeTruthy(): void;
  toBeFalsy(): void;
  toBeUndefined(): void;
  toBeNull(): void;
  toBeDefined(): void;
  toBeGreaterThan(n: number | bigint): void;
  toBeLessThan(n: number | bigint): void;
}

interface Expectation extends Matchers {
  /** The matchers, negated: expect(h.get(...)).not.toBeNull(). */
  readonly not: Matchers;
}

/**
 * An object h.add, h.update and h.delete take and harness({objects}) seeds: apiVersion, kind
 * and metadata.name (or, for a create, metadata.generateName). A namespaced object without a
 * namespace goes to "default".
 */
interface HarnessObject {
  apiVersion: string;
  kind: string;
  metadata: HarnessObjectMeta;
  [field: string]: any;
}

/** Properties whose value is undefined are left out, as JSON.stringify leaves them out. */
interface HarnessObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: { [key: string]: string | undefined };
  annotations?: { [key: string]: string | undefined };
  [field: string]: any;
}

/** The runner's flags that matter to a plugin. */
interface HarnessFlags {
  /** --gvr: a resource or a list, for plugins without watch. */
  gvr?: string | string[];
  /** -n */
  namespace?: string;
  /** -l */
  selector?: string;
  /** --field-selector */
  fieldSelector?: string;
  /** --dry-run */
  dryRun?: boolean;
  /** --handler-timeout, a Go duration ("2s"); default "5s". Real time. */
  handlerTimeout?: string;
  /**
   * --allow-net: entries comma-separated, or a list ([] allows nothing, the runner's default).
   * Given, fetch is checked against it as the runner checks it (by name; an IP literal
   * against IP and CIDR entries) before any route answers. Absent, routes stand in for the
   * network and only the script's net declaration is checked.
   */
  allowNet?: string | string[];
}

/** harness()'s options; any other property is an error. */
interface HarnessOptions {
  /**
   * Created in order before the plugin starts, so it sees them as initial adds. Each is an
   * object or the path, relative to the test file, of a YAML or JSON file (one or more
   * documents, List kinds expanded) or of a recording of `runner record` (.jsonl: its
   * initial list).
   */
  objects?: Array<HarnessObject | string>;
  flags?: HarnessFlags;
  /** Where the virtual clock starts, RFC 3339; default "2030-01-01T00:00:00Z". */
  now?: string;
  /**
   * Routes added before the plugin starts, so requests its initial list causes are answered:
   * each entry is h.http.route's arguments.
   */
  http?: { routes?: Array<[method: string, url: string | RegExp, handler: (request: HarnessRequest) => HarnessRouteReply]> };
  /**
   * The admission scripts (paths relative to the test file) loaded beside the plugin, before
   * it: their validate and mutate admit every write to the cluster, and h.admit asks them.
   * Default: every plugin of the test file's folder that defines validate or mutate; [] loads
   * none (the plugin itself still admits when it defines them).
   */
  admission?: string[];
  /** The plugin's ctx.store before it starts: keys and their values (JSON). */
  store?: { [key: string]: unknown };
}

/** h.admit's request: what the API server sends the webhooks; any other property is an error. */
interface HarnessAdmissionRequest {
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  /** The object of the request (its apiVersion and kind name the resource); ignored on DELETE. */
  object?: HarnessObject;
  /** UPDATE and DELETE; when absent, the object the cluster holds. */
  oldObject?: HarnessObject;
  /** Default { username: "runner-test", groups: ["system:authenticated"] }, as for the cluster's writes. */
  userInfo?: { username?: string; uid?: string; groups?: string[]; extra?: { [key: string]: string[] } };
  dryRun?: boolean;
  /** "status", ...: the scripts' webhooks match the main resource only. */
  subresource?: string;
  /** Ask only this admission script (a path relative to the test file). */
  script?: string;
}

/** One webhook's decision, as the runner's webhook server made it. */
interface HarnessAdmissionDecision {
  readonly script: string;
  readonly webhook: "validate" | "mutate";
  readonly allowed: boolean;
  /** The HTTP status of a denial (default 403; 500 for a script that failed), else 200. */
  readonly code: number;
  /** A denial's message; for an audited or warned one, what it would have said. */
  readonly message: string;
  readonly warnings: string[];
  /** The JSON Patch mutate's object makes (RFC 6902 operations), or null. */
  readonly patch: { op: string; path: string; value?: any; from?: string }[] | null;
  readonly outcome: "allowed" | "denied" | "warned" | "audited" | "errored";
}

/**
 * h.admit's answer: the matching mutating webhooks ran first, by script name, each on the
 * object the previous left, then every matching validating webhook. The top-level fields are
 * the deciding webhook's (the denial, else the first that warned, audited or errored);
 * decisions is empty when no script's webhook matches the request.
 */
interface HarnessAdmission {
  readonly allowed: boolean;
  readonly code: number;
  readonly message: string;
  /** Every webhook's warnings, as kubectl would print them. */
  readonly warnings: string[];
  /** Every mutating webhook's patch, in order, or null. */
  readonly patch: { op: string; path: string; value?: any; from?: string }[] | null;
  readonly outcome: "allowed" | "denied" | "warned" | "audited" | "errored";
  /** The request's object as the mutations left it (null on DELETE). */
  readonly object: KubeObject | null;
  readonly decisions: HarnessAdmissionDecision[];
}

/** h.audit's options; any other property is an error. */
interface HarnessAuditOptions {
  /** Another loaded audit script than the plugin (a path relative to the test file). */
  script?: string;
}

type HarnessAuditOutcome = "pass" | "fail" | "warn" | "error" | "skip";

/** One object's audit result, as a report holds it. */
interface HarnessAuditResult {
  readonly kind: string;
  /** Absent for a cluster-scoped object. */
  readonly namespace?: string;
  readonly name: string;
  /** fail: validate denied (warn in mode "warn"); warn: allowed with warnings; error: it threw or timed out. */
  readonly result: HarnessAuditOutcome;
  /** The denial's message, the warnings joined with "; ", or the error; "" for a pass. */
  readonly message: string;
}

/**
 * h.audit's answer: a script's audit results (admission.audit) now, as the runner publishes
 * them. Objects outside the script's namespaces (admission.namespaceSelector,
 * excludeNamespaces, kube-system, kube-node-lease) have none.
 */
interface HarnessAudit {
  /** Every result, sorted by namespace, kind and name. */
  readonly results: HarnessAuditResult[];
  /** The results counted by outcome. */
  readonly summary: { readonly [outcome in HarnessAuditOutcome]: number };
  /**
   * The openreports.io/v1alpha1 Report (one per namespace) and ClusterReport objects the
   * runner would write, sorted by namespace and name; their timestamps are the virtual clock's.
   */
  readonly reports: KubeObject[];
}

/** A Go duration ("30s", "10m", "1h30m") or milliseconds. */
type HarnessDuration = string | number;

type HarnessPatchType = "merge" | "json" | "strategic" | "apply";

/** h.list's options; any other property is an error. */
interface HarnessListOptions {
  /** Absent or "": every namespace. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** One write the plugin sent, in h.writes. */
interface HarnessWrite {
  /** The k8s call; k8s.event is a create of v1/events. */
  readonly verb: "create" | "update" | "updateStatus" | "patch" | "patchStatus" | "delete";
  /** Canonical: "apps/v1/deployments", "v1/configmaps". */
  readonly resource: string;
  /** "" for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
  /** The object (create, update), the patch (decoded when it is JSON, else its text), or null (delete). */
  readonly body: any;
  readonly dryRun: boolean;
  /** For patches. */
  readonly patchType?: HarnessPatchType;
  /** For deletes given one. */
  readonly propagationPolicy?: "Orphan" | "Background" | "Foreground";
  /** When the cluster refused the write. */
  readonly error?: { readonly message: string; readonly code?: number; readonly reason?: string };
  /** The admission webhooks' warnings for it, in order, allowed or not (kubectl prints them); [] without any. */
  readonly warnings: string[];
}

/** One metric sample, in h.metrics(). */
interface HarnessSample {
  name: string;
  labels: { [label: string]: string };
  value: number;
}

/** One record the plugin logged with log or console: level, message and its fields. */
interface HarnessLog {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  [field: string]: any;
}

/** One failure of the plugin, as the runner logs it. */
interface HarnessError {
  /** "warn" for a reconcile that will be retried. */
  level: "warn" | "error";
  message: string;
  /** "onAdd", "onUpdate", "onDelete", "reconcile", ... */
  handler: string;
  /** The event's resource; absent for reconcile. */
  resource?: string;
  /** The object's (or reconcile's) key: "namespace/name", or "name". */
  object: string;
  /** "file:line:col: message", positioned in the plugin. */
  error: string;
  /** The JavaScript stack, when there is one. */
  stack?: string;
  /** reconcile: the attempt that failed, from 1. */
  attempt?: number;
  /** Set when the handler outlived --handler-timeout. */
  timeout?: boolean;
  /** Set when the handler did not return after it was interrupted, and its runtime was abandoned. */
  stuck?: boolean;
  [field: string]: unknown;
}

/** h.explain's answer: the debug API's explain JSON (docs/debugging.md). */
interface HarnessExplanation {
  resource: string;
  object: string;
  exists: boolean;
  current?: KubeObject;
  deliveries: { script: string; version?: string; state: string; delivered: boolean; reason?: string; detail?: string; cached: boolean; [field: string]: unknown }[];
  records: {
    seq: number; time: string; script: string; version: string; resource: string; object: string;
    event: "add" | "update" | "delete" | "reconcile" | "replay"; initial?: boolean; handler?: string;
    durationMs: number; result: string; error?: string; attempt?: number;
    logs?: { time: string; level: string; message: string; attrs?: Record<string, unknown> }[];
    writes?: { verb: string; resource: string; namespace?: string; name?: string; dryRun?: boolean; code: number; error?: string }[];
    requests?: { method: string; host: string; path: string; status: number; durationMs: number; bytes: number; error?: string }[];
    enqueued?: string[];
    [field: string]: unknown;
  }[];
  dropped?: boolean;
  recording: boolean;
  /** Each audit script's (admission.audit) result for the object; absent when none audits it. */
  audit?: { script: string; result: "pass" | "fail" | "warn" | "error" | "skip"; message?: string; time: string }[];
  /** The printed form, as runner explain prints it. */
  text: string;
}

/**
 * One plugin on the runner's engine, against an in-memory cluster and a virtual clock. Writes
 * return once the engine is quiet: the plugin has handled everything they caused that is due
 * now. Resources are named as with --gvr; namespace is "" for cluster-scoped resources.
 * Objects returned are plain, mutable copies; a call the cluster refuses throws a K8sError.
 */
interface Harness {
  /** Creates obj (a missing namespace is created first) and returns the stored object. */
  add<T = KubeObject>(obj: HarnessObject): T;
  /**
   * Creates the objects of a file, as objects does (a YAML or JSON file of one or more
   * documents, List kinds expanded, or a recording's initial list; relative to the test file),
   * one after the other as successive h.add calls would, and returns the stored objects.
   */
  add<T = KubeObject>(path: string): T[];
  /**
   * Replaces the object: a metadata.resourceVersion must be current (409 Conflict otherwise),
   * without one the update is unconditional; status is then set through the status subresource.
   */
  update<T = KubeObject>(obj: HarnessObject): T;
  /** Deletes it; an object with finalizers is only marked (deletionTimestamp). */
  delete(obj: HarnessObject): void;
  delete(resource: string, namespace: string, name: string): void;
  /** patch: an object (sent as JSON), an array (a "json" patch) or text. Field manager "harness", forced. */
  patch<T = KubeObject>(resource: string, namespace: string, name: string, patch: object | string, options?: { type?: HarnessPatchType }): T;
  /** The object as the cluster holds it, or null. */
  get<T = KubeObject>(resource: string, namespace: string, name: string): T | null;
  /** The objects, sorted by namespace and name. */
  list<T = KubeObject>(resource: string, options?: HarnessListOptions): T[];
  /**
   * Runs until quiet, moving the clock through delayed reconcile keys due within `within`
   * (default "1h") of now. Schedules do not run: see advance.
   */
  settle(options?: { within?: HarnessDuration }): void;
  /** Moves the clock forward, running delayed keys and schedule entries at their due times on the way. */
  advance(duration: HarnessDuration): void;
  /** The virtual time. */
  now(): Date;
  /** Feeds a recording of `runner record` (a path relative to the test file) to the plugin, change by change. */
  replay(file: string): void;
  /**
   * The plugin's metric samples as a scrape of /metrics serves them (collects run now, on the
   * plugin's worker), one per exposition line, sorted by name and labels; a histogram gives its
   * _bucket (with le), _sum and _count samples. With name, only that family's. A family whose
   * collect throws is left out, as in a scrape.
   */
  metrics(name?: string): HarnessSample[];
  /** The same families in the Prometheus text exposition format. */
  metricsText(): string;
  /**
   * What `runner explain` shows of one object ("namespace/name", or "name"): whether the
   * plugin is shown it and why not, and its last events with handler, result, logs, writes and
   * enqueued keys. Its toString() (and text) is the printed form: `${h.explain("cm", "ns/x")}`.
   */
  explain(resource: string, object: string): HarnessExplanation;
  /**
   * Asks the loaded admission scripts about one request, as the API server would call their
   * webhooks (same matching: operations, resource, namespaces, label selector, never
   * kube-system), without writing anything. A write through h or the plugin is admitted the
   * same way: a denial throws or fails it with the API server's error (403 "admission webhook
   * \"...\" denied the request: message"), a mutation changes what is stored.
   */
  admit(request: HarnessAdmissionRequest): HarnessAdmission;
  /**
   * The audit results of the plugin (or options.script), which must have validate and
   * admission: { audit: true }: every object of its watch was audited when it loaded, and each
   * write through h (or the plugin) is audited before the write returns; a deleted object's
   * result is gone.
   */
  audit(options?: HarnessAuditOptions): HarnessAudit;
  /**
   * The plugin's ctx.store, in memory with the runner's versions, conflicts, limits and TTLs
   * (on the virtual clock); shared(name) reaches any shared namespace, declared or not.
   */
  readonly store: ScriptStore;
  /** The plugin's outbox (ctx.outbox.send, outbox.deliver): each message's record, by key (docs/once.md). */
  readonly outbox: HarnessOutbox;
  /** Every write the plugin sent, in order. */
  readonly writes: HarnessWrite[];
  /** What the plugin logged with log and console, in order. */
  readonly logs: HarnessLog[];
  /** The plugin's failures (handlers, reconcile retries), in order. */
  readonly errors: HarnessError[];
  /** The plugin's network: fetch reaches only these routes, never the real network. */
  readonly http: HarnessHTTP;
}

/** A request the plugin sent, as a route handler and h.http.requests see it. */
interface HarnessRequest {
  method: string;
  /** The whole URL, query included. */
  url: string;
  /** By lower-case name. */
  headers: { [name: string]: string };
  body: string;
}

/**
 * What a route answers: {status (default 200), headers, body (a string, or a value sent as JSON)}, a string body, or nothing (an empty 200).
 * delay holds the answer on the virtual clock ("30s", milliseconds, or Infinity: never answered): only h.advance delivers it, or ends the request first at its timeout.
 */
type HarnessRouteReply = { status?: number; headers?: { [name: string]: string }; body?: unknown; delay?: string | number } | string | void;

interface HarnessHTTP {
  /**
   * Answers the plugin's requests whose method (or "*") and URL match: a string where *
   * matches anything (without ?, the query is ignored) or a RegExp tested on the whole URL.
   * The last route added that matches answers; a request no route answers fails the harness
   * call that ran it, naming the request. Handlers run on the test's goroutine.
   */
  route(method: string, url: string | RegExp, handler: (request: HarnessRequest) => HarnessRouteReply): void;
  /** Every request the plugin sent, in order, routed or not. */
  readonly requests: HarnessRequest[];
}

declare var test: TestFunction;
declare var it: TestFunction;

/** Groups the tests fn declares: their names become "name > test"; hooks declared in fn apply to them only. */
declare function describe(name: string, fn: () => void): void;
/** Runs before every test of the file, or of the describe it is declared in (outer hooks first). */
declare function beforeEach(fn: TestBody): void;
/** Runs after every test of the file, or of the describe it is declared in (inner hooks first). */
declare function afterEach(fn: TestBody): void;

declare function expect(received: unknown): Expectation;

/**
 * Loads plugin (its path relative to the test file) as the runner does, against a new
 * in-memory cluster seeded with options.objects, and returns once it has handled the initial
 * list. It is closed when the test that opened it ends.
 */
declare function harness(plugin: string, options?: HarnessOptions): Harness;

/** h.outbox: the records of the plugin's outbox, as the runner keeps them in the store. */
interface HarnessOutbox {
  /** Every record, sorted by key. */
  list(): HarnessOutboxRecord[];
  /** key's record, or null. */
  get(key: string): HarnessOutboxRecord | null;
}

/** One outbox message: pending (due, or waiting out its backoff), claimed (being delivered), done or failed. */
interface HarnessOutboxRecord {
  key: string;
  state: "pending" | "claimed" | "done" | "failed";
  message: unknown;
  /** Deliveries started. */
  attempts: number;
  /** The last failed delivery's error; "" once done. */
  lastError: string;
  /** The latest delivery was interrupted (its outcome unknown) and delivered again or given up. */
  interrupted: boolean;
}
