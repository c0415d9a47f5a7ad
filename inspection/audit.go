package inspection

import "time"

// The audit views (admission.audit): one object's results, in Explanation.Audit, and each
// audit script's summary, for the web page's policies view.

// AuditResult is one audit script's current verdict on one object.
type AuditResult struct {
	Script string `json:"script"`
	// Result is pass, fail, warn, error or skip, as in an openreports.io report.
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
	// Time is when the script first reached this verdict on the object; it stays while the
	// verdict does.
	Time time.Time `json:"time"`
}

// AuditFailing bounds the failing objects an AuditSummary lists when asked for none in
// particular: a cluster may hold 100,000 of them.
const AuditFailing = 100

// AuditSummary is one audit script's results: counts, progress through its initial pass,
// and its first failing objects.
type AuditSummary struct {
	Script string `json:"script"`
	// Results counts the objects audited by result: pass, fail, warn, error, skip.
	Results map[string]int `json:"results"`
	// InitialPass: the script's version is still auditing the objects its watch held when it
	// loaded; Audited of Objects are done.
	InitialPass bool `json:"initialPass,omitempty"`
	Audited     int  `json:"audited,omitempty"`
	Objects     int  `json:"objects,omitempty"`
	// Failing are the objects whose result is error, fail or warn, in that order, then by
	// resource and key; at most the limit asked for. MoreFailing is how many more there are.
	Failing     []AuditFinding `json:"failing"`
	MoreFailing int            `json:"moreFailing,omitempty"`
	// ReportSelector is the label selector of the script's openreports.io reports, which
	// list every result: "jsinformer.dev/script=team-js".
	ReportSelector string `json:"reportSelector"`
}

// AuditFinding is one object's result that is not a pass.
type AuditFinding struct {
	Resource string    `json:"resource"` // canonical: "apps/v1/deployments"
	Object   string    `json:"object"`   // namespace/name, or name when cluster-scoped
	Result   string    `json:"result"`
	Message  string    `json:"message,omitempty"`
	Time     time.Time `json:"time"`
}
