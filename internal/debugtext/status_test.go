package debugtext_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/internal/debugtext"
	"github.com/jsinformer/jsinformer/status"
)

// TestStatusMissingPermissions: runner status lists what the runner lacks with the command
// that grants it, and says nothing of permissions when nothing is missing.
func TestStatusMissingPermissions(t *testing.T) {
	t.Parallel()
	var none bytes.Buffer
	debugtext.Status(&none, status.Status{Ready: true})
	if strings.Contains(none.String(), "permissions") {
		t.Errorf("a permissions section with nothing missing:\n%s", none.String())
	}
	var out bytes.Buffer
	debugtext.Status(&out, status.Status{Ready: true, Permissions: []status.PermissionStatus{
		{Script: "07-ttl-cleanup.js", Verb: "delete", Resource: "jobs.batch", Why: "k8s.delete at 07-ttl-cleanup.js:58",
			Grant: "kubectl create clusterrole NAME --verb=delete --resource=jobs.batch"},
		{Script: "05.js", Verb: "create", Resource: "secrets", Namespace: "web", Why: "k8s.patch", Refused: 3,
			Grant: "kubectl create role NAME -n web --verb=create --resource=secrets"},
	}})
	lines := strings.Split(out.String(), "\n")
	i := 0
	for i < len(lines) && lines[i] != "Missing permissions:" {
		i++
	}
	if i+3 >= len(lines) {
		t.Fatalf("no Missing permissions section:\n%s", out.String())
	}
	for j, want := range [][]string{
		{"SCRIPT", "VERB", "RESOURCE", "NAMESPACE", "WHY", "REFUSED", "GRANT"},
		{"07-ttl-cleanup.js", "delete", "jobs.batch", "(all)", "k8s.delete at 07-ttl-cleanup.js:58", "-", "kubectl create clusterrole NAME --verb=delete --resource=jobs.batch"},
		{"05.js", "create", "secrets", "web", "k8s.patch", "3", "kubectl create role NAME -n web --verb=create --resource=secrets"},
	} {
		line := lines[i+1+j]
		for _, cell := range want {
			if !strings.Contains(line, cell) {
				t.Errorf("line %q lacks %q", line, cell)
			}
		}
	}
}
