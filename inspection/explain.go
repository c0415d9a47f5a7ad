package inspection

// DefaultExplainEvents is how many records Explain returns when asked for none in particular.
const DefaultExplainEvents = 20

// Explanation is the answer of Explain: the object as the server has it now, whether each
// script is shown it, the last trace records about it, oldest first, and its audit results.
type Explanation struct {
	Resource   string         `json:"resource"`
	Object     string         `json:"object"`
	Exists     bool           `json:"exists"` // on the server at the time of the question
	Current    map[string]any `json:"current,omitempty"`
	Deliveries []Delivery     `json:"deliveries"`
	Records    []TraceRecord  `json:"records"`
	// Dropped: older records of this object are gone (per-object or overall cap).
	Dropped bool `json:"dropped,omitempty"`
	// Recording is false when the runner records no traces (--trace-records 0).
	Recording bool `json:"recording"`
	// Owner is the replica whose handlers and reconciles run for this key, with --sharded
	// (empty otherwise); Self is this runner's identity.
	Owner string `json:"owner,omitempty"`
	Self  string `json:"self,omitempty"`
	// Audit is each audit script's (admission.audit) current result for the object, by
	// script name; absent when no script audits it.
	Audit []AuditResult `json:"audit,omitempty"`
}

// Delivery says whether one script version is shown an object, and if not, why.
type Delivery struct {
	Script  string `json:"script"`
	Version string `json:"version,omitempty"`
	State   string `json:"state"` // the version's state: syncing, current, draining; or stopped, failed, not loaded
	// Delivered: the object passes one of the script's watches on this resource.
	Delivered bool `json:"delivered"`
	// Reason, when not delivered: not watched, namespace, selector, field selector, syncing,
	// stopped (by the memory guard), not loaded (failed or waiting); with Detail saying which.
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Watch is the watch that delivers it, or the closest that does not.
	Watch *WatchView `json:"watch,omitempty"`
	// Cached: the script's own cache (ctx.cache) holds the object.
	Cached bool `json:"cached"`
}

// WatchView is one resolved watch of a script version.
type WatchView struct {
	Resource      string `json:"resource"`
	Namespace     string `json:"namespace,omitempty"` // empty: all namespaces, or cluster-scoped
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	Enqueue       string `json:"enqueue,omitempty"` // reconcile scripts: self, owner, function, none
}
