package deploy_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/permissions"
)

// rbacCommand generates rbac.yaml from the repository's root.
const rbacCommand = "runner rbac --leader-elect --scripts deploy/scripts --service-account jsinformer"

// TestRBACIsGeneratedFromScripts fails when rbac.yaml is not what `runner rbac` prints for the
// shipped scripts: a script changed (or one was added) without regenerating it, or the file
// was edited by hand.
func TestRBACIsGeneratedFromScripts(t *testing.T) {
	t.Parallel()
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: "scripts", Runner: permissions.Runner{LeaderElect: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dynamic) > 0 {
		t.Errorf("shipped scripts make calls the generated RBAC cannot cover: %v", rep.Dynamic)
	}
	var want bytes.Buffer
	if err := permissions.WriteYAML(&want, permissions.Roles(rep.Needs), permissions.Identity{Name: "jsinformer"},
		permissions.Header(rbacCommand, rep)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("deploy/rbac.yaml is not what the shipped scripts need; regenerate it from the repository's root:\n"+
			"  go run ./cmd/runner %s > deploy/rbac.yaml\nfirst difference:\n%s",
			strings.TrimPrefix(rbacCommand, "runner "), firstDifference(string(got), want.String()))
	}
}

// firstDifference shows the first line that differs, with its number.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  file:      %s\n  generated: %s", i+1, gl, wl)
		}
	}
	return "(none)"
}

// TestShardedRBACGrantsWhatShardingNeeds: the sharded component's hand-written Role, with the
// base's generated rules, grants what the shipped scripts need under --sharded.
func TestShardedRBACGrantsWhatShardingNeeds(t *testing.T) {
	t.Parallel()
	rep, err := permissions.Compute(t.Context(), permissions.Options{Dir: "scripts", Runner: permissions.Runner{Sharded: true}})
	if err != nil {
		t.Fatal(err)
	}
	var files []byte
	for _, name := range []string{"rbac.yaml", "sharded/rbac.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files = append(append(files, data...), "\n---\n"...)
	}
	grants, err := permissions.ReadGrants(files, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range grants.Missing(rep.Needs) {
		t.Errorf("the sharded overlay lacks: %s needs %s (%s)", n.Script, n, n.Why)
	}
}
