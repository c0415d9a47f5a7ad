package status

import "time"

// Status is the engine's state at one moment.
type Status struct {
	// Seq grows with every change of a version's state, a load, readiness, leadership or an
	// informer's health; handler counters move without changing it.
	Seq   uint64 `json:"seq"`
	Ready bool   `json:"ready"`
	// NotReady is why Ready is false: Ready's error.
	NotReady string       `json:"notReady,omitempty"`
	Leader   LeaderStatus `json:"leader"`
	// Shard is this replica's standing in the shard ring; nil without --sharded.
	Shard     *ShardStatus     `json:"shard,omitempty"`
	Scripts   []ScriptStatus   `json:"scripts"`
	Informers []InformerStatus `json:"informers"`
	// Permissions are what the runner lacks of what its scripts need (the start-up and
	// periodic check), then the scripts' calls the API server refused; empty when all is
	// granted.
	Permissions []PermissionStatus `json:"permissions,omitempty"`
	// Runner is the process that answered, set by the debug API (nil elsewhere): with two
	// runners on one machine, the one a command reached.
	Runner *RunnerInfo `json:"runner,omitempty"`
	// Webhooks are the admission webhook entries of the scripts serving admission, one per
	// script and kind, set by the runner's debug API (nil elsewhere).
	Webhooks []WebhookStatus `json:"webhooks,omitempty"`
	// Server is the API server the runner talks to, as its /version said at start; nil
	// before the runner has connected, and in `runner test` (no API server).
	Server *ServerStatus `json:"server,omitempty"`
	// Audit is the state of continuous audit (admission.audit); nil while no script audits
	// and the report CRDs are not known to be missing.
	Audit *AuditStatus `json:"audit,omitempty"`
}

// AuditStatus is the state of continuous audit.
type AuditStatus struct {
	// ReportsMissing: the cluster does not serve the openreports.io CRDs, so the results are
	// kept in memory only (deploy/crds/openreports.yaml installs them).
	ReportsMissing bool                `json:"reportsMissing,omitempty"`
	Scripts        []AuditScriptStatus `json:"scripts,omitempty"`
}

// AuditScriptStatus is one audit script's results and progress.
type AuditScriptStatus struct {
	Script string `json:"script"`
	// InitialPass: the script's version is still auditing the objects its watch held when it
	// loaded; its reports wait until it is done.
	InitialPass bool `json:"initialPass,omitempty"`
	// Audited and Objects are the initial pass's progress: objects audited so far of those
	// the script's watch listed (Objects grows while the informers still list).
	Audited int `json:"audited,omitempty"`
	Objects int `json:"objects,omitempty"`
	// Results counts the objects audited by result: pass, fail, warn, error, skip.
	Results map[string]int `json:"results"`
}

// WebhookStatus is one admission webhook entry of a script, as the runner registers it.
type WebhookStatus struct {
	Script string `json:"script"`
	// Configuration is the Validating- or MutatingWebhookConfiguration holding the entry,
	// "ValidatingWebhookConfiguration/NAME"; empty when this runner registers none (no
	// --webhook-url or --webhook-service, or --dry-run).
	Configuration string `json:"configuration,omitempty"`
	Name          string `json:"name"`    // the entry's name
	Webhook       string `json:"webhook"` // validate or mutate
	// Path is the entry's path on the runner's webhook server; SharedWith the other scripts
	// the entry calls (scripts whose entries would be alike share one), in the order of Path.
	Path       string   `json:"path"`
	SharedWith []string `json:"sharedWith,omitempty"`
	// Rules are the entry's rules: "CREATE,UPDATE apps/v1/deployments (Namespaced)".
	Rules          []string `json:"rules"`
	FailurePolicy  string   `json:"failurePolicy"`
	Mode           string   `json:"mode"`
	TimeoutSeconds int      `json:"timeoutSeconds"`
	// Namespaces the entry is limited to (empty: all but the excluded ones); LabelSelector its
	// object selector.
	Namespaces    []string `json:"namespaces,omitempty"`
	LabelSelector string   `json:"labelSelector,omitempty"`
	// Stopped: the memory guard stopped the script; its failurePolicy answers.
	Stopped bool `json:"stopped,omitempty"`
}

// ServerStatus is the API server, read once when the runner connects.
type ServerStatus struct {
	Host     string `json:"host"`
	Version  string `json:"version"` // gitVersion: "v1.37.2"
	Platform string `json:"platform,omitempty"`
	// Supported is the runner's support window, "v1.34 to v1.37" (README, "Supported
	// Kubernetes versions"); OlderThanSupported is true for an API server older than it, which
	// the runner warned about at start.
	Supported          string `json:"supported"`
	OlderThanSupported bool   `json:"olderThanSupported,omitempty"`
}

// PermissionStatus is a permission a script needs that the runner lacks.
type PermissionStatus struct {
	Script    string `json:"script"`
	Verb      string `json:"verb"`
	Resource  string `json:"resource"`            // resource.group, "/status" included
	Namespace string `json:"namespace,omitempty"` // empty: all namespaces
	Why       string `json:"why"`                 // "watch", "k8s.patch at a.js:3", ...
	Grant     string `json:"grant"`               // the kubectl command that adds it
	// Refused counts the calls the API server refused at run time; 0 for a permission the
	// check found missing.
	Refused int `json:"refused,omitempty"`
}

// RunnerInfo identifies a runner process: what runner status prints and what the discovery
// record of runner list holds.
type RunnerInfo struct {
	PID        int       `json:"pid"`
	Host       string    `json:"host"`
	Pod        string    `json:"pod,omitempty"` // namespace/name, in a cluster
	ScriptsDir string    `json:"scriptsDir"`
	DebugAddr  string    `json:"debugAddr"`
	Started    time.Time `json:"started"`
}

// Script returns the status of the named script, if the engine knows it.
func (s Status) Script(name string) (ScriptStatus, bool) {
	for _, sc := range s.Scripts {
		if sc.Name == name {
			return sc, true
		}
	}
	return ScriptStatus{}, false
}

// ScriptState sums up a script.
type ScriptState string

const (
	// ScriptServing means a version serves the script (another may be syncing to replace it).
	ScriptServing ScriptState = "serving"
	// ScriptSyncing means its first version is syncing; nothing serves it yet.
	ScriptSyncing ScriptState = "syncing"
	// ScriptFailed means its content failed to load and no older version serves it.
	ScriptFailed ScriptState = "failed"
	// ScriptWaiting means its watch names a resource the server does not serve (yet); retried.
	ScriptWaiting ScriptState = "waiting"
	// ScriptStopped means the memory guard stopped it; it stays stopped until its file changes.
	ScriptStopped ScriptState = "stopped"
	// ScriptUnloaded means its file is gone; its last versions are still draining.
	ScriptUnloaded ScriptState = "unloaded"
)

// ScriptStatus is one script file.
type ScriptStatus struct {
	Name string `json:"name"`
	// Hash is the content last read from the file.
	Hash  string      `json:"hash"`
	State ScriptState `json:"state"`
	// Versions are the live versions, oldest first, then the failed or stopped content and
	// the last versions done.
	Versions []VersionStatus `json:"versions"`
	// Loads are the latest loads, reloads, failures and unloads, oldest first.
	Loads []LoadStatus `json:"loads"`
	// Handlers counts calls by handler name (onAdd, onUpdate, onDelete, reconcile, schedule),
	// over every version of the script since it was first loaded.
	Handlers map[string]HandlerCounts `json:"handlers"`
	// Watches are the newest live version's.
	Watches []WatchStatus `json:"watches"`
}

// Version returns the status of the script's version of content hash, the newest first.
func (s ScriptStatus) Version(hash string) (VersionStatus, bool) {
	for i := len(s.Versions) - 1; i >= 0; i-- {
		if s.Versions[i].Hash == hash {
			return s.Versions[i], true
		}
	}
	return VersionStatus{}, false
}

// Current returns the version serving the script.
func (s ScriptStatus) Current() (VersionStatus, bool) {
	for _, v := range s.Versions {
		if v.State == VersionCurrent {
			return v, true
		}
	}
	return VersionStatus{}, false
}

// VersionState is where a version is in its life (package engine/internal/version, State).
type VersionState string

const (
	// VersionSyncing and the next three are the versionState of a live or finished version.
	VersionSyncing VersionState = "syncing"
	// VersionCurrent serves the script.
	VersionCurrent VersionState = "current"
	// VersionDraining is retired and finishing its calls.
	VersionDraining VersionState = "draining"
	// VersionDone has joined every goroutine and closed every runtime.
	VersionDone VersionState = "done"
	// VersionStopped means stopped by the memory guard (then draining and done like any other).
	VersionStopped VersionState = "stopped"
	// VersionFailed means the content did not load; Error says why.
	VersionFailed VersionState = "failed"
)

// VersionStatus is one content of a script.
type VersionStatus struct {
	Hash  string       `json:"hash"`
	State VersionState `json:"state"`
	// Started is when building it began.
	Started time.Time `json:"started"`
	// Objects is how many objects its cache holds; Queued how many events wait for its worker.
	Objects int `json:"objects"`
	Queued  int `json:"queued"`
	// Error is why a failed content did not load.
	Error *ErrorStatus `json:"error,omitempty"`
	// MemoryBytes is what the memory guard measured when it stopped the version.
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// Net is the definition's `net` declaration: where its fetch may connect, within
	// --allow-net; empty when it declares none.
	Net []string `json:"net,omitempty"`
	// Outbox is the script's outbox as this version last listed it; nil without one.
	Outbox *OutboxStatus `json:"outbox,omitempty"`
}

// LoadResult is the outcome of a load.
type LoadResult string

const (
	// LoadLoaded means the content serves (its first version, or a new one).
	LoadLoaded LoadResult = "loaded"
	// LoadReloaded means a new content replaced a serving version.
	LoadReloaded LoadResult = "reloaded"
	// LoadFailed means the content did not load.
	LoadFailed LoadResult = "failed"
	// LoadWaiting means failed on a resource the server does not serve (yet); retried.
	LoadWaiting LoadResult = "waiting"
	// LoadUnloaded means the file was removed.
	LoadUnloaded LoadResult = "unloaded"
	// LoadStopped means the memory guard stopped it.
	LoadStopped LoadResult = "stopped"
)

// LoadStatus is one load of a script.
type LoadStatus struct {
	At     time.Time  `json:"at"`
	Hash   string     `json:"hash"`
	Result LoadResult `json:"result"`
	// TookSeconds is from compiling until the version served (loaded, reloaded).
	TookSeconds float64 `json:"tookSeconds,omitempty"`
	// Objects is how many objects the version was shown as initial adds.
	Objects int          `json:"objects,omitempty"`
	Error   *ErrorStatus `json:"error,omitempty"`
}

// ErrorStatus is an error with its position in the script, when it has one.
type ErrorStatus struct {
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

// HandlerCounts are one handler's calls. Errors include Timeouts and Stuck.
type HandlerCounts struct {
	Calls    uint64 `json:"calls"`
	Errors   uint64 `json:"errors"`
	Timeouts uint64 `json:"timeouts"`
	Stuck    uint64 `json:"stuck"`
}

// WatchStatus is one watched resource of a version.
type WatchStatus struct {
	Resource      string `json:"resource"`
	Namespace     string `json:"namespace,omitempty"`
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
}

// InformerStatus is one running shared informer.
type InformerStatus struct {
	WatchStatus
	// Users is how many script versions hold it; Scripts names the scripts.
	Users   int      `json:"users"`
	Scripts []string `json:"scripts"`
	Synced  bool     `json:"synced"`
	Healthy bool     `json:"healthy"`
	Objects int      `json:"objects"`
	// FailingSince is when the current failure began; LastError the latest failure.
	FailingSince *time.Time `json:"failingSince,omitempty"`
	LastError    string     `json:"lastError,omitempty"`
	Relists      uint64     `json:"relists"`
	// LastContact is when the informer last heard from the server (a list, a watch opened,
	// an event or a bookmark).
	LastContact *time.Time `json:"lastContact,omitempty"`
	// BytesReceived counts the bytes of the response bodies its lists and watches read from
	// the API server since it started (after HTTP decompression).
	BytesReceived uint64 `json:"bytesReceived"`
	// Shard is set for an informer that caches only part of the objects (a partitioned
	// cache over server-side sharded list and watch, docs/sharding.md).
	Shard *InformerShard `json:"shard,omitempty"`
}

// InformerShard is how a partitioned informer's objects are filtered.
type InformerShard struct {
	// Partition names the field hashed and the slices kept: "namespace slices 0-40,77 of 256".
	Partition string `json:"partition"`
	// Selector is the shardSelector sent with its lists and watches ("" when it keeps every slice).
	Selector string `json:"selector,omitempty"`
	// Mode is "server" (the API server filters: it echoed the selector), "client" (it does
	// not: the runner drops other objects as they are decoded), "pending" (no answer yet;
	// the runner filters) or "off" (the partition holds every slice). Reason says why.
	Mode   string `json:"mode"`
	Reason string `json:"reason"`
	// Received counts the objects the API server sent (list items, watch events); Kept those
	// in the partition.
	Received uint64 `json:"received"`
	Kept     uint64 `json:"kept"`
}

// LeaderStatus is this runner's standing in leader election.
type LeaderStatus struct {
	// Enabled is false without leader election: the runner then always leads.
	Enabled bool `json:"enabled"`
	Leading bool `json:"leading"`
	// Identity is this runner's, Holder the leader's last observed.
	Identity string `json:"identity,omitempty"`
	Lease    string `json:"lease,omitempty"`
	Holder   string `json:"holder,omitempty"`
}

// ShardStatus is this replica's standing in the shard ring (--sharded).
type ShardStatus struct {
	Identity string `json:"identity"`
	Lease    string `json:"lease"`
	// Members is the ring this replica acts on; Pending is true while it moves to another.
	Members    []string `json:"members"`
	Pending    bool     `json:"pending"`
	Generation uint64   `json:"generation"`
	// Valid is false before the replica joined and once it cannot renew its Lease: it then
	// calls nothing.
	Valid bool `json:"valid"`
	// Partitions are the distinct cache partitions of this replica's partitioned informers
	// (--shard-cache, docs/sharding.md), as InformerShard.Partition names them: the ranges
	// this replica lists, watches and caches. Empty without --shard-cache.
	Partitions []string `json:"partitions,omitempty"`
	// Cached counts, per script whose caches are partitioned and which has a serving
	// version, the objects it caches on this replica (jsinformer_shard_cached_objects):
	// replicas far apart are skew. Nil without --shard-cache.
	Cached map[string]int `json:"cached,omitempty"`
}
