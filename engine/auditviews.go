package engine

import (
	"strings"

	"github.com/jsinformer/jsinformer/engine/internal/audit"

	"github.com/jsinformer/jsinformer/inspection"
)

// The audit results as people see them: in runner explain (objectAudit) and in the web page's
// policies view (AuditSummaries).

// objectAudit is each audit script's result for the object key (namespace/name) of resource
// (canonical); nil when none audits it.
func (e *Engine) objectAudit(resource, key string) []inspection.AuditResult {
	s := e.audits.Load()
	if s == nil {
		return nil
	}
	var out []inspection.AuditResult
	for _, r := range s.results.Object(resource + "|" + key) {
		out = append(out, inspection.AuditResult{Script: r.Script, Result: r.Result, Message: r.Message, Time: r.Time})
	}
	return out
}

// AuditSummaries returns each audit script's counts, progress through its initial pass, and
// at most limit of its failing objects (error, then fail, then warn; inspection.AuditFailing
// when limit <= 0), sorted by script; empty while none audits. Its cost is linear in the
// results held and its memory in limit. Safe from any goroutine.
func (e *Engine) AuditSummaries(limit int) []inspection.AuditSummary {
	s := e.audits.Load()
	if s == nil {
		return []inspection.AuditSummary{}
	}
	if limit <= 0 {
		limit = inspection.AuditFailing
	}
	sums := s.results.Summaries(limit)
	out := make([]inspection.AuditSummary, 0, len(sums))
	for _, sum := range sums {
		v := inspection.AuditSummary{Script: sum.Script, Results: sum.Counts, InitialPass: sum.InitialPass,
			Audited: sum.Audited, Objects: sum.Objects, Failing: make([]inspection.AuditFinding, 0, len(sum.Failing)), MoreFailing: sum.More,
			ReportSelector: audit.ScriptLabel + "=" + audit.ScriptLabelValue(sum.Script)}
		for _, f := range sum.Failing {
			resource, object, _ := strings.Cut(f.Key, "|")
			v.Failing = append(v.Failing, inspection.AuditFinding{Resource: resource, Object: object,
				Result: f.Result.Result, Message: f.Message, Time: f.Time})
		}
		out = append(out, v)
	}
	return out
}
