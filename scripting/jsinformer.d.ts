// Type declarations for jsinformer scripts: the globals (log, console, util, k8s, defineScript,
// fetch and its classes), the definition object, ctx and ctx.cache. Written by `runner types`; see docs/scripts.md.
//
// This file declares globals: keep it next to your scripts (or list it in tsconfig.json's
// "files"/"include") and TypeScript, or an editor checking JavaScript, picks it up. Interfaces
// for the resources your cluster serves come from `runner types --gvr ...` (resources.d.ts).

/** A Kubernetes object as scripts see it: any resource, built-in or custom. */
interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: any;
  status?: any;
  [field: string]: any;
}

interface ObjectMeta {
  name: string;
  /** Absent for cluster-scoped objects. */
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  generateName?: string;
  [field: string]: any;
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/**
 * Objects handed to scripts are read-only views: any write throws a TypeError at run time, and
 * this type makes it a compile error. util.clone gives a mutable copy.
 */
type View<T> = T extends (...args: any[]) => any
  ? T
  : T extends readonly (infer E)[]
    ? ReadonlyArray<View<E>>
    : T extends object
      ? { readonly [K in keyof T]: View<T[K]> }
      : T;

/** The mutable plain copy util.clone makes of a view. */
type Mutable<T> = T extends (...args: any[]) => any
  ? T
  : T extends readonly (infer E)[]
    ? Mutable<E>[]
    : T extends object
      ? { -readonly [K in keyof T]: Mutable<T[K]> }
      : T;

/** What to watch: a resource named as with --gvr ("apps/v1/deployments", "deploy", "widgets.example.com"). */
type Watch = string | WatchSpec;

interface WatchSpec {
  resource: string;
  /** Empty or absent: the runner's -n (all namespaces without it). Ignored for cluster-scoped resources. */
  namespace?: string;
  /** Runs on the API server, as kubectl -l. Empty or absent: the runner's -l. */
  labelSelector?: string;
  /** Runs on the API server, as kubectl --field-selector. Empty or absent: the runner's --field-selector. */
  fieldSelector?: string;
  /**
   * What this entry's events enqueue for reconcile: the object's own key (absent, or "self"),
   * "owner" (the key of its controller owner in ownerReferences), false (nothing), or a
   * function naming keys.
   */
  enqueue?: "self" | "owner" | boolean | ((obj: View<KubeObject>) => string | string[] | null | undefined);
}

/** One entry of `schedule`: exactly one of every or cron. */
interface ScheduleEntry<T = KubeObject> {
  /** A Go duration, at least "1s": "30s", "5m", "1h30m". */
  every?: string;
  /** Five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, ... */
  cron?: string;
  /** Called on the script's worker, never beside its other handlers, with ctx.cache complete. */
  run(ctx: Context<T>): void | Promise<void>;
}

/**
 * The object a script exports (export default, or module.exports). T is the type of the watched
 * objects; defineScript<Deployment>({...}) types every handler's arguments.
 */
interface ScriptDefinition<T = KubeObject> {
  /** Default: every --gvr given to the runner. */
  watch?: Watch | Watch[];
  /** Index functions: pure, fast, run before each handler; query them with ctx.cache.byIndex and indexKeys. */
  indexers?: { [name: string]: (obj: View<T>) => string | string[] | null | undefined };
  /** An object appeared, or is replayed at start-up, after a reload or when this replica gains its key (ctx.isInInitialList). */
  onAdd?(obj: View<T>, ctx: Context<T>): void | Promise<void>;
  /** An object changed, or was resynced (then oldObj and newObj are the same state). */
  onUpdate?(oldObj: View<T>, newObj: View<T>, ctx: Context<T>): void | Promise<void>;
  /** An object was deleted or left the watch; null when the runner never had its state. */
  onDelete?(obj: View<T> | null, ctx: Context<T>): void | Promise<void>;
  /** Controller-style handler, fed from a rate-limited workqueue of "namespace/name" keys. A throw retries. */
  reconcile?(key: string, ctx: Context<T>): ReconcileResult | void | Promise<ReconcileResult | void>;
  /** Reconcile workers; default 1. */
  concurrency?: number;
  /** Retries of a failing reconcile key before it is dropped; default 5. */
  maxRetries?: number;
  /** Periodic jobs; only on the leader with --leader-elect; restarted by a reload. */
  schedule?: ScheduleEntry<T>[];
  /**
   * Prometheus metric families served on the runner's /metrics, by name (exposed as written;
   * the jsinformer_, go_, process_ and promhttp_ prefixes are reserved). A family with collect
   * is computed at each scrape from ctx.cache; one without is updated by handlers through
   * ctx.metrics.NAME.
   */
  metrics?: { [name: string]: MetricFamily<T> };
  /**
   * What the script's k8s calls need beyond what `runner rbac` reads from its source: calls
   * whose resource is only known at run time. See docs/permissions.md.
   */
  permissions?: Permission[];
  /**
   * Where this script's fetch may connect: --allow-net entries (HOST[:PORT], *.DOMAIN, IP,
   * CIDR). It narrows the runner's --allow-net, never widens it; shown in `runner status`.
   */
  net?: string[];
  /**
   * Under `runner --sharded --shard-cache`: how this script's caches are split over the
   * replicas (docs/sharding.md). "namespace" (the default there): each replica caches the
   * namespaces it owns; ctx.cache lookups must name one of them (list needs a namespace,
   * byIndex a value "namespace/..."), others throw. "uid": objects spread by uid; ctx.cache
   * throws; no reconcile or watch enqueue. "none": the whole cluster on every replica.
   * Without --shard-cache it changes nothing.
   */
  shard?: "namespace" | "uid" | "none";
  /**
   * ctx.store's declaration (docs/store.md). shared: the shared namespaces (DNS labels) this
   * script reaches with ctx.store.shared(name); scripts share keys only in a namespace they all
   * declare. readable: key prefixes whose values the runner may show (traces, explain, the
   * debug page, `runner store show`); other values show only their size. "" makes every key
   * readable.
   */
  store?: { shared?: string[]; readable?: string[] };
  /**
   * Side effects once (docs/once.md): ctx.outbox.send(key, message) records a message under an
   * idempotency key, and deliver(message, ctx) performs it, on whichever replica claims it,
   * retried with backoff when it throws. A key is delivered once however often it is sent.
   */
  outbox?: OutboxOptions;
  /**
   * Admission: decides on a request before the API server stores it. obj is the request's
   * object (null on DELETE; ctx.oldObject is then the object deleted). Return undefined to
   * allow. Runs with no side effects: k8s writes, events and fetch throw.
   */
  validate?(obj: View<T> | null, ctx: AdmissionContext<T>): Validation | void | Promise<Validation | void>;
  /**
   * Admission: returns the changed object (a util.clone of obj, changed), or undefined for no
   * change; the runner sends the API server the JSON Patch between the two. Changing
   * metadata.name, metadata.namespace, metadata.uid, apiVersion or kind is refused.
   */
  mutate?(obj: View<T> | null, ctx: AdmissionContext<T>): Mutable<T> | KubeObject | void | Promise<Mutable<T> | KubeObject | void>;
  /** How validate and mutate are served; every field has a default. */
  admission?: AdmissionOptions;
}

/** The `admission` options of a definition. */
interface AdmissionOptions {
  /** Operations the webhooks match; default ["CREATE", "UPDATE"]. "*" alone matches all. */
  operations?: ("CREATE" | "UPDATE" | "DELETE" | "CONNECT" | "*")[];
  /** What a throw, a timeout or a memory stop answers: "Fail" denies (default), "Ignore" allows with a warning. Also the webhook's own failurePolicy (the runner down). */
  failurePolicy?: "Fail" | "Ignore";
  /** The webhook's timeoutSeconds, 1 to 30; default 10. The script's deadline is shorter. */
  timeoutSeconds?: number;
  /** "enforce" (default) denies; "warn" turns denials into warnings; "audit" only records them. */
  mode?: "enforce" | "warn" | "audit";
  /**
   * Subresources of the watched resources the webhooks cover too, e.g. ["scale"] so that
   * `kubectl scale` (deployments/scale) reaches validate and mutate, with ctx.subResource
   * "scale" and obj the Scale object; "*" alone for all. Default: none, the main resources only.
   */
  subresources?: string[];
  /**
   * Accept failurePolicy "Fail" on a cluster-scoped resource (nodes, namespaces, CRDs...) or on
   * Leases, where webhooks that deny while no runner answers can lock the cluster out; without
   * it such a script does not load. Only with failurePolicy "Fail".
   */
  allowClusterLockout?: boolean;
  /**
   * true: validate also audits every object of the watch already in the cache (on each load
   * of the script, then on each change), with ctx.operation "AUDIT", and the runner publishes
   * the results as openreports.io Reports. Default false. Requires validate.
   */
  audit?: boolean;
  /**
   * Only objects in namespaces with these labels (a webhook's namespaceSelector, within the
   * watch's namespace): requests elsewhere never reach the script, and the audit gives them
   * no result. A Namespace object is matched by its own labels; other cluster-scoped objects
   * always. Default: every namespace. kube-system and kube-node-lease are never selected.
   */
  namespaceSelector?: AdmissionLabelSelector;
  /** Namespaces, by name, whose objects the script never admits nor audits. */
  excludeNamespaces?: string[];
}

/** A label selector, as in a ValidatingWebhookConfiguration; its parts are ANDed. */
interface AdmissionLabelSelector {
  matchLabels?: { [key: string]: string };
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}

/** What validate returns to decide; undefined allows. */
interface Validation {
  allowed: boolean;
  /** Shown to the client on a denial. */
  message?: string;
  /** The HTTP status of a denial, 400 to 599; default 403. */
  code?: number;
  /** Printed by kubectl, allowed or not; at most 32. */
  warnings?: string[];
}

/** The ctx argument of validate and mutate; valid only during the call it was passed to. */
interface AdmissionContext<T = KubeObject> {
  /**
   * "AUDIT" when the runner audits a cached object (admission.audit): there is no request, so
   * oldObject and userInfo are null and dryRun is false; skip request-only checks then.
   */
  readonly operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT" | "AUDIT";
  /** The stored object on UPDATE and DELETE; null otherwise. */
  readonly oldObject: View<T> | null;
  /** Who asks, as the API server authenticated them. */
  readonly userInfo: View<{ username?: string; uid?: string; groups?: string[]; extra?: { [key: string]: string[] } }>;
  /** True when the request is a dry run: decide the same way. */
  readonly dryRun: boolean;
  /** The subresource asked for ("status", "scale"), or "". */
  readonly subResource: string;
  /** The resource, canonical: "apps/v1/deployments". */
  readonly resource: string;
  /** The object's namespace ("" when cluster-scoped) and name (may be "" on CREATE with generateName). */
  readonly namespace: string;
  readonly name: string;
  /** The plugin's name. */
  readonly script: string;
  /** Read-only queries over the objects this script version has been shown, with its indexes. */
  readonly cache: Cache<T>;
  /** The script's store; only get and list here: set and delete throw "side effects are not allowed here". */
  readonly store: ScriptStore;
}

/** A definition's outbox: deliver performs a message's side effect; a throw or a rejected promise is a failed attempt. */
interface OutboxOptions {
  /** Performs the message's side effect. Send ctx.delivery.key along (an Idempotency-Key header) so the receiver can drop a repeat. */
  deliver(message: any, ctx: Context): void | Promise<void>;
  /** Deliveries before a message fails for good (a metric, an Event, runner status). Default 10. */
  attempts?: number;
  /** The wait after the first failure, doubled after each: a duration ("5s") or milliseconds. Default "5s". */
  backoff?: string | number;
  /** The longest wait between attempts. Default "10m". */
  maxBackoff?: string | number;
  /** How long a key is remembered once its message is delivered or failed: sending it again within that time does nothing. Default "168h". */
  keep?: string | number;
  /**
   * A delivery interrupted by a crash (its outcome unknown): "redeliver" (default: delivered
   * again, at least once, with ctx.delivery.interrupted) or "fail" (at most once).
   */
  interrupted?: "redeliver" | "fail";
}

/** ctx.outbox: the script's outbox, kept in the API server (docs/once.md). */
interface ScriptOutbox {
  /**
   * Records message (JSON) under key for outbox.deliver, unless the key was sent before (and
   * is still remembered): true when recorded, false when it was a repeat. Throws where side
   * effects are refused (validate, mutate). about names the object an Event of a failed
   * delivery is recorded on.
   */
  send(key: string, message: unknown, options?: { about?: KubeObject | View<KubeObject> }): boolean;
}

/** ctx.delivery during outbox.deliver. */
interface Delivery {
  /** The key the message was sent under: pass it to the receiver as an idempotency key. */
  readonly key: string;
  /** This attempt, from 1. */
  readonly attempt: number;
  /** The attempts allowed (outbox.attempts). */
  readonly attempts: number;
  /** The previous attempt was interrupted by a crash: it may or may not have taken effect. */
  readonly interrupted: boolean;
}

/** One entry of `permissions`: verbs on a resource ("v1/secrets", "example.com/v1/widgets/status"). */
interface Permission {
  resource: string;
  verbs: ("get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection")[];
  /** Where; omitted or empty: every namespace. */
  namespaces?: string[];
}

/** One family of `metrics`. */
interface MetricFamily<T = KubeObject> {
  type: "gauge" | "counter" | "histogram";
  /** What the series mean, shown by Prometheus and Grafana. */
  help: string;
  /** Label names; every sample has them all (a missing one is ""). */
  labels?: string[];
  /** A histogram's upper bounds, increasing; default Prometheus's (0.005 to 10). */
  buckets?: number[];
  /**
   * Called at each scrape on the script's worker, under the handler timeout, with ctx.cache as
   * the script has been shown it: returns every series of the family, at most
   * --metric-series-limit of them, each label set once. Gauges and counters only. A throw or
   * timeout leaves the family out of that scrape (jsinformer_script_metric_errors_total).
   */
  collect?(ctx: Context<T>): MetricSample[] | null | Promise<MetricSample[] | null>;
}

/** One series returned by collect. */
interface MetricSample {
  /** Label values, at most 256 characters each; numbers and booleans are written as strings. */
  labels?: MetricLabels;
  /** true is 1, false is 0. */
  value: number | boolean;
}

type MetricLabels = { [label: string]: string | number | boolean | null | undefined };

/**
 * ctx.metrics.NAME, for a family without collect. Counters have inc, gauges inc, dec and set,
 * histograms observe; the others throw. Starting a series past --metric-series-limit throws.
 */
interface MetricHandle {
  /** Adds n (default 1; never negative for a counter). */
  inc(labels?: MetricLabels, n?: number): void;
  /** Gauges: subtracts n (default 1). */
  dec(labels?: MetricLabels, n?: number): void;
  /** Gauges: sets the series to value. */
  set(value: number, labels?: MetricLabels): void;
  /** Histograms: counts value in its bucket. */
  observe(value: number, labels?: MetricLabels): void;
}

interface ReconcileResult {
  /** Call reconcile again for this key later: a Go duration ("30s", "1m30s") or milliseconds. */
  requeueAfter?: string | number;
}

/** The ctx argument of handlers; valid only during the call it was passed to. */
interface Context<T = KubeObject> {
  /** The resource the event is about, canonical: "apps/v1/deployments", "v1/pods", "example.com/v1/widgets". */
  readonly resource: string;
  /** The plugin's name, its path in the scripts folder: "team-a/cleanup.js". */
  readonly script: string;
  /** True for the adds that replay the current state at start-up, after a reload, and (with --sharded) for the objects whose keys this replica just gained. */
  readonly isInInitialList: boolean;
  /** True in onDelete when the watch missed the deletion; obj is then the last known state, or null. */
  readonly finalStateUnknown: boolean;
  /** Read-only queries over the objects this script version has been shown. */
  readonly cache: Cache<T>;
  /** Adds a key to the reconcile queue; only in scripts that define reconcile. */
  enqueue(key: string): void;
  /** The definition's metric families without collect, to update from handlers, reconcile and schedules. */
  readonly metrics: { readonly [name: string]: MetricHandle };
  /** The script's key-value store, kept in the API server and shared by the runner's replicas (docs/store.md). */
  readonly store: ScriptStore;
  /** Side effects once: send records a message for the definition's outbox.deliver (docs/once.md). */
  readonly outbox: ScriptOutbox;
  /** In outbox.deliver only: which message and which attempt; undefined elsewhere. */
  readonly delivery?: Delivery;
}

/**
 * ctx.store: the script's keys (strings) and values (JSON), kept across restarts, reloads and
 * replicas. A write returns once the API server has it. Errors carry code and reason: a
 * compare-and-set that lost is reason "Conflict" (409), a limit "RequestEntityTooLarge" (413).
 */
interface ScriptStore {
  /** The key's entry, or null when it is absent or expired. */
  get<V = unknown>(key: string): StoreEntry<V> | null;
  /**
   * Stores value (JSON: functions and undefined are left out as JSON.stringify does) and
   * returns the key's new version. ttl (a duration string such as "1h", or milliseconds)
   * makes the key expire; version makes it a compare-and-set: it applies only if the key's
   * version is still that (0: the key must be absent) and throws reason "Conflict" otherwise.
   */
  set(key: string, value: unknown, options?: { ttl?: string | number; version?: number }): number;
  /** Removes the key; true when it existed. version as in set. */
  delete(key: string, options?: { version?: number }): boolean;
  /** The entries whose keys start with prefix (all when omitted), sorted by key. */
  list<V = unknown>(prefix?: string): StoreEntry<V>[];
  /**
   * The store of a shared namespace the definition declares (store.shared), which every
   * script declaring it reads and writes; the same methods. An undeclared name throws.
   */
  shared(name: string): SharedStore;
}

/** ctx.store.shared(name): a shared namespace's store. */
interface SharedStore extends Omit<ScriptStore, "shared"> {
  /** The namespace's name. */
  readonly name: string;
}

/** One key of ctx.store as get and list return it; value is the script's own copy. */
interface StoreEntry<V = unknown> {
  readonly key: string;
  value: V;
  /** What set's and delete's version option compare with; grows with every write. */
  readonly version: number;
  /** When the key expires, in milliseconds since the epoch; null when it does not. */
  readonly expiresAt: number | null;
}

interface Cache<T = KubeObject> {
  /** The cached object, or null. namespace is "" for cluster-scoped objects; resource defaults to ctx.resource. */
  get<U = T>(namespace: string, name: string, resource?: string): View<U> | null;
  /** Cached objects sorted by namespace/name; no namespace means all. */
  list<U = T>(options?: { namespace?: string; labelSelector?: string; resource?: string }): ReadonlyArray<View<U>>;
  /** Objects (of any watched resource) whose index function returned value. */
  byIndex<U = T>(index: string, value: string): ReadonlyArray<View<U>>;
  /** Keys ("namespace/name", or "name" when cluster-scoped) of byIndex, in the same order. */
  indexKeys(index: string, value: string): ReadonlyArray<string>;
}

/** Structured log records tagged with the script's name and version. */
interface Log {
  debug(message: string, fields?: { [key: string]: unknown }): void;
  info(message: string, fields?: { [key: string]: unknown }): void;
  warn(message: string, fields?: { [key: string]: unknown }): void;
  error(message: string, fields?: { [key: string]: unknown }): void;
}

/** Node-style console: arguments joined with spaces, objects as JSON. console.log is info. */
interface Console {
  log(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** One differing leaf found by util.diff. */
interface DiffEntry {
  /** As JavaScript would access it: a.b, a["x.y/z"], a[0]; "" for differing top-level scalars. */
  readonly path: string;
  /** undefined where the path is absent. */
  readonly old: any;
  readonly new: any;
}

interface Util {
  /** A deep, mutable, plain copy; views, plain objects and arrays are copied. */
  clone<T>(value: T): Mutable<T>;
  /** One entry per differing leaf, sorted by key; resourceVersion, generation and managedFields are ignored. */
  diff(a: unknown, b: unknown): ReadonlyArray<DiffEntry>;
  /** Text (UTF-8) to standard padded base64, as in Secret data. */
  base64Encode(text: string): string;
  /** Standard padded base64 to text; anything else throws a TypeError. */
  base64Decode(base64: string): string;
  /** The ownerReferences entry naming owner; controller and blockOwnerDeletion default to true. */
  ownerReference(owner: object, options?: { controller?: boolean; blockOwnerDeletion?: boolean }): Required<OwnerReference>;
  /**
   * A new conditions list with condition set as apimachinery's meta.SetStatusCondition sets it:
   * lastTransitionTime moves only when status changes. The list given is not changed.
   */
  setStatusCondition(conditions: ReadonlyArray<Condition> | null | undefined, condition: ConditionInput): Condition[];
  /**
   * The milliseconds a response's Retry-After header asks to wait (seconds or an HTTP date),
   * for reconcile's {requeueAfter}; fallbackMs (default null) without a usable header.
   */
  retryAfter(response: Response, fallbackMs?: number | null): number | null;
}

interface ConditionInput {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

interface Condition extends ConditionInput {
  lastTransitionTime: string;
}

interface PatchOptions {
  /** Default "merge". "strategic" is for built-in types only; "apply" is server-side apply. */
  type?: "merge" | "json" | "strategic" | "apply";
  /** With "apply": take over fields other managers own instead of failing with 409 Conflict. */
  force?: boolean;
  /** Default "jsinformer". */
  fieldManager?: string;
}

/** The Error a failed k8s call throws: code and reason are set when the server answered with a status. */
interface K8sError extends Error {
  /** The HTTP status, e.g. 404. */
  code?: number;
  /** "NotFound", "AlreadyExists", "Conflict", "Forbidden", "Invalid", ... */
  reason?: string;
}

/**
 * Synchronous API server calls with the runner's credentials. Resources are named as with
 * --gvr; namespace is "" for cluster-scoped resources. A failure throws a K8sError.
 */
interface K8s {
  get<T = KubeObject>(resource: string, namespace: string, name: string): View<T>;
  list<T = KubeObject>(resource: string, options?: { namespace?: string; labelSelector?: string; fieldSelector?: string }): ReadonlyArray<View<T>>;
  /** The namespace comes from obj.metadata.namespace. */
  create<T = KubeObject>(resource: string, obj: object): View<T>;
  /** Sends metadata.resourceVersion as given: a stale copy fails with 409 Conflict. */
  update<T = KubeObject>(resource: string, obj: object): View<T>;
  updateStatus<T = KubeObject>(resource: string, obj: object): View<T>;
  /** patch: an object (sent as JSON), an array (a "json" patch), or a string sent as it is. */
  patch<T = KubeObject>(resource: string, namespace: string, name: string, patch: object | string, options?: PatchOptions): View<T>;
  patchStatus<T = KubeObject>(resource: string, namespace: string, name: string, patch: object | string, options?: PatchOptions): View<T>;
  delete(resource: string, namespace: string, name: string, options?: { propagationPolicy?: "Orphan" | "Background" | "Foreground" }): void;
  /** Records a core/v1 Event about obj, as kubectl describe shows it. */
  event(obj: object, type: "Normal" | "Warning" | undefined, reason: string, message: string): void;
  /** Adds a finalizer unless present; conflict-safe (tests the resourceVersion it read, retries). */
  addFinalizer<T = KubeObject>(resource: string, namespace: string, name: string, finalizer: string): View<T>;
  /** Removes a finalizer if present; conflict-safe; null when the object is gone. */
  removeFinalizer<T = KubeObject>(resource: string, namespace: string, name: string, finalizer: string): View<T> | null;
}

type HeadersInit = Headers | [string, string][] | Record<string, string>;

/** HTTP headers, case-insensitive by name, as in the WHATWG fetch standard. */
declare class Headers {
  constructor(init?: HeadersInit);
  append(name: string, value: string): void;
  set(name: string, value: string): void;
  /** The values of name joined with ", ", or null. */
  get(name: string): string | null;
  has(name: string): boolean;
  delete(name: string): void;
  forEach(fn: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

interface ResponseInit {
  status?: number;
  statusText?: string;
  headers?: HeadersInit;
}

/**
 * A response of fetch. Its body was read when the promise resolved, up to --fetch-max-body:
 * text() and json() of a larger body reject with a RangeError.
 */
declare class Response {
  constructor(body?: string | null, init?: ResponseInit);
  readonly status: number;
  readonly statusText: string;
  /** status is 200-299. */
  readonly ok: boolean;
  readonly headers: Headers;
  /** The final URL, after redirects, with any password removed. */
  readonly url: string;
  readonly redirected: boolean;
  readonly type: "basic";
  readonly bodyUsed: boolean;
  text(): Promise<string>;
  json(): Promise<any>;
  clone(): Response;
  static json(data: unknown, init?: ResponseInit): Response;
}

/** Aborts fetch requests: from new AbortController().signal, AbortSignal.timeout or AbortSignal.abort. */
declare class AbortSignal {
  private constructor();
  readonly aborted: boolean;
  readonly reason: any;
  onabort: ((event: { type: "abort"; target: AbortSignal }) => void) | null;
  throwIfAborted(): void;
  addEventListener(type: "abort", listener: (event: { type: "abort"; target: AbortSignal }) => void): void;
  removeEventListener(type: "abort", listener: (event: { type: "abort"; target: AbortSignal }) => void): void;
  /** A signal already aborted, with reason (default an AbortError). */
  static abort(reason?: unknown): AbortSignal;
  /** A signal that aborts a request ms milliseconds (real time) after it was made, with a TimeoutError. */
  static timeout(ms: number): AbortSignal;
}

declare class AbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

interface RequestInit {
  /** Default "GET". */
  method?: string;
  headers?: HeadersInit;
  /** A string: JSON.stringify an object yourself. At most --fetch-max-request-body bytes. */
  body?: string | null;
  signal?: AbortSignal | null;
}

/**
 * An HTTP request, as in the WHATWG fetch standard: only to hosts --allow-net (and the
 * definition's net) allow, checked on the resolved address and on every redirect (at most 5).
 * Allowed in handlers, reconcile, schedule and collect, which must await it: the handler's
 * deadline covers it, and a request not awaited is cancelled when the call returns. Refused in
 * index and enqueue functions and at the module's top level. Never retried.
 */
declare function fetch(input: string | { href: string } | { url: string }, init?: RequestInit): Promise<Response>;

declare var log: Log;
declare var console: Console;
declare var util: Util;
declare var k8s: K8s;

/**
 * Returns its argument: it exists so that TypeScript checks a definition,
 * `export default defineScript<Deployment>({ ... })`.
 */
declare function defineScript<T = KubeObject>(definition: ScriptDefinition<T>): ScriptDefinition<T>;
