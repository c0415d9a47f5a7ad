package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

// auditOf is script's audit status, if it audits.
func auditOf(st status.Status, script string) (status.AuditScriptStatus, bool) {
	if st.Audit == nil {
		return status.AuditScriptStatus{}, false
	}
	i := slices.IndexFunc(st.Audit.Scripts, func(s status.AuditScriptStatus) bool { return s.Script == script })
	if i < 0 {
		return status.AuditScriptStatus{}, false
	}
	return st.Audit.Scripts[i], true
}

// TestAuditInExplainAndSummaries: runner explain shows each object's audit result with its
// message and time, the policies summary lists the failing object with its resource and key,
// and both follow a fix of the object.
func TestAuditInExplainAndSummaries(t *testing.T) {
	t.Parallel()
	r := startEngine(t, map[string]string{}, nil)
	ns := r.namespace(t, "audit-views")
	r.create(t, configmapsGVR, configmap(ns, "bad", nil, nil))
	r.create(t, configmapsGVR, configmap(ns, "good", map[string]any{"team": "a"}, nil))
	before := time.Now().Truncate(time.Second)
	r.write(t, "team.js", strings.ReplaceAll(teamAudit, "%q", `"`+ns+`"`))
	defer func() {
		if t.Failed() {
			t.Log(r.log.dump())
		}
	}()
	waitFor(t, "team.js's initial pass done with one fail", func() bool {
		s, ok := auditOf(r.engine.Status(), "team.js")
		return ok && !s.InitialPass && s.Results["fail"] == 1 && s.Results["pass"] >= 1
	})
	explainAudit := func(name string) []inspection.AuditResult {
		x, err := r.engine.Explain(t.Context(), "cm", ns+"/"+name, 0)
		if err != nil {
			t.Fatal(err)
		}
		return x.Audit
	}
	got := explainAudit("bad")
	if len(got) != 1 || got[0].Script != "team.js" || got[0].Result != "fail" || got[0].Message != "label 'team' is required" ||
		got[0].Time.Before(before) || got[0].Time.After(time.Now()) {
		t.Errorf("explain bad: audit %+v, want team.js fail with its message, timed after %v", got, before)
	}
	if got := explainAudit("good"); len(got) != 1 || got[0].Result != "pass" || got[0].Message != "" {
		t.Errorf("explain good: audit %+v, want team.js pass", got)
	}

	sums := r.engine.AuditSummaries(0)
	i := slices.IndexFunc(sums, func(s inspection.AuditSummary) bool { return s.Script == "team.js" })
	if i < 0 {
		t.Fatalf("summaries %+v lack team.js", sums)
	}
	want := []inspection.AuditFinding{{Resource: "v1/configmaps", Object: ns + "/bad", Result: "fail", Message: "label 'team' is required"}}
	failing := sums[i].Failing
	for j := range failing {
		failing[j].Time = time.Time{}
	}
	if !slices.Equal(failing, want) || sums[i].MoreFailing != 0 || sums[i].Results["fail"] != 1 {
		t.Errorf("team.js summary %+v, want failing %+v", sums[i], want)
	}

	r.patch(t, configmapsGVR, ns, "bad", `{"metadata":{"labels":{"team":"b"}}}`)
	waitFor(t, "explain bad shows pass once fixed", func() bool {
		got := explainAudit("bad")
		return len(got) == 1 && got[0].Result == "pass"
	})
	for _, s := range r.engine.AuditSummaries(0) {
		if s.Script == "team.js" && len(s.Failing) != 0 {
			t.Errorf("team.js still lists failing objects once fixed: %+v", s.Failing)
		}
	}
}

// slowAudit's validate takes about 150ms per audited object.
const slowAudit = `export default {
  watch: { resource: "v1/configmaps", namespace: %q },
  validate(obj, ctx) {
    if (ctx.operation === "AUDIT") { const end = Date.now() + 150; while (Date.now() < end) {} }
  },
  admission: { audit: true, mode: "audit" },
};
`

// TestAuditStatusShowsProgress: while an audit script's initial pass runs, runner status shows
// how many of the objects its watch listed it has audited; the pass then ends with every one.
func TestAuditStatusShowsProgress(t *testing.T) {
	t.Parallel()
	r := startEngine(t, map[string]string{}, nil)
	ns := r.namespace(t, "audit-progress")
	const n = 8
	for i := range n {
		r.create(t, configmapsGVR, configmap(ns, fmt.Sprintf("cm-%d", i), nil, nil))
	}
	list, err := r.dyn.Resource(configmapsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objects := len(list.Items) // the n, and whatever else the namespace holds
	r.write(t, "slow.js", fmt.Sprintf(slowAudit, ns))
	defer func() {
		if t.Failed() {
			t.Log(r.log.dump())
		}
	}()
	var mid status.AuditScriptStatus
	waitFor(t, "slow.js part way through its initial pass", func() bool {
		s, ok := auditOf(r.engine.Status(), "slow.js")
		if ok && s.InitialPass && s.Objects == objects && s.Audited > 0 && s.Audited < objects {
			mid = s
			return true
		}
		return false
	})
	t.Logf("mid-pass: %d of %d audited", mid.Audited, mid.Objects)
	waitFor(t, "slow.js's initial pass done", func() bool {
		s, ok := auditOf(r.engine.Status(), "slow.js")
		return ok && !s.InitialPass && s.Results["pass"] == objects
	})
	if s, _ := auditOf(r.engine.Status(), "slow.js"); s.Audited != 0 || s.Objects != 0 {
		t.Errorf("after the pass status still shows progress %d of %d", s.Audited, s.Objects)
	}
}
