package main

import (
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/status"
)

// auditTeamScript audits the debug namespace's ConfigMaps for a team label.
const auditTeamScript = `export default {
  watch: { resource: "configmaps", namespace: "NS" },
  validate(cm) { if (!cm.metadata.labels?.team) return { allowed: false, message: "no team label" }; },
  admission: { audit: true, mode: "audit" },
};`

// TestExplainAndStatusShowAudit: with an audit script saved, runner status lists it with its
// counts once its initial pass is done, and runner explain shows its result for each object
// with the message, in text and in JSON.
func TestExplainAndStatusShowAudit(t *testing.T) {
	d := startDebugEnv(t)
	writeScript(t, d.scripts, "audit.js", strings.ReplaceAll(auditTeamScript, "NS", d.ns))
	eventually(t, "runner status shows audit.js's pass done with one pass and one fail", func() string {
		var st status.Status
		d.jsonOf(t, &st, "status")
		if st.Audit != nil {
			for _, s := range st.Audit.Scripts {
				if s.Script == "audit.js" && !s.InitialPass && s.Results["pass"] == 1 && s.Results["fail"] == 1 {
					return ""
				}
			}
		}
		return "status audit: " + d.must(t, "status")
	})
	fields := func(text, first string) string {
		for line := range strings.Lines(text) {
			if f := strings.Fields(line); len(f) > 0 && f[0] == first && strings.Contains(line, "  ") {
				return strings.Join(f, " ")
			}
		}
		return ""
	}
	st := d.must(t, "status")
	_, auditPart, ok := strings.Cut(st, "\nAudit:\n")
	if got := fields(auditPart, "audit.js"); !ok || got != "audit.js done 1 1 0 0 0" {
		t.Errorf("runner status's audit line for audit.js = %q, want \"audit.js done 1 1 0 0 0\":\n%s", got, st)
	}

	x := d.explain(t, "target")
	if len(x.Audit) != 1 || x.Audit[0].Script != "audit.js" || x.Audit[0].Result != "fail" || x.Audit[0].Message != "no team label" || x.Audit[0].Time.IsZero() {
		t.Errorf("explain target -o json: audit %+v, want audit.js fail \"no team label\" with a time", x.Audit)
	}
	if x := d.explain(t, "api"); len(x.Audit) != 1 || x.Audit[0].Result != "pass" {
		t.Errorf("explain api -o json: audit %+v, want audit.js pass", x.Audit)
	}
	text := d.must(t, "explain", "cm", d.ns+"/target")
	_, auditText, ok := strings.Cut(text, "\nAudit:\n")
	if !ok {
		t.Fatalf("runner explain has no Audit section:\n%s", text)
	}
	line := fields(auditText, "audit.js")
	if !strings.HasPrefix(line, "audit.js fail ") || !strings.HasSuffix(line, " no team label") {
		t.Errorf("runner explain's audit line = %q, want audit.js fail SINCE no team label:\n%s", line, text)
	}
}
