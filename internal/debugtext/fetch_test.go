package debugtext

import (
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/status"
)

func TestStatusPrintsNetDeclarations(t *testing.T) {
	t.Parallel()
	st := status.Status{Ready: true, Scripts: []status.ScriptStatus{
		{Name: "notify.js", Hash: "abc", Versions: []status.VersionStatus{{Hash: "abc", State: status.VersionCurrent, Net: []string{"hooks.slack.com", "10.0.0.0/8"}}}},
		{Name: "plain.js", Hash: "def", Versions: []status.VersionStatus{{Hash: "def", State: status.VersionCurrent}}},
	}}
	var b strings.Builder
	Status(&b, st)
	out := b.String()
	if !strings.Contains(out, "Network (declared `net`") || !strings.Contains(out, "hooks.slack.com,10.0.0.0/8") {
		t.Errorf("status lacks the net declaration:\n%s", out)
	}
	if strings.Count(out, "plain.js") != 1 {
		t.Errorf("a script without net must not be listed under Network:\n%s", out)
	}
}

func TestRecordPrintsFetchRequests(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	Record(&b, inspection.TraceRecord{Script: "n.js", Event: "update", Handler: "onUpdate", Result: "ok",
		Requests: []inspection.HTTPRequest{{Method: "POST", Host: "hooks.slack.com", Path: "/services/x", Status: 200, DurationMs: 12.5, Bytes: 2},
			{Method: "GET", Host: "api.invalid", Path: "/", Error: "refused"}}}, false)
	for _, want := range []string{"fetch  POST hooks.slack.com/services/x -> 200", "fetch  GET api.invalid/ -> 0", "refused"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("record lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRecordPrintsAdmissionDecision(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	Record(&b, inspection.TraceRecord{Script: "p.js", Event: "admission", Handler: "mutate", Result: "denied", Resource: "v1/configmaps", Object: "web/x",
		Admission: &inspection.AdmissionDecision{Webhook: "mutate", Operation: "UPDATE", User: "bob", Code: 403, Message: "no",
			Warnings: []string{"careful"}, Patch: `[{"op":"add"}]`}}, true)
	for _, want := range []string{"p.js  admission UPDATE  v1/configmaps web/x  mutate  by bob  denied", "denied 403  no", "warning  careful", `patch  [{"op":"add"}]`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("record lacks %q:\n%s", want, b.String())
		}
	}
}
