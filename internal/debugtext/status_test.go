package debugtext

import (
	"strings"
	"testing"

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
