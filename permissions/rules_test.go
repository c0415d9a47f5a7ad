package permissions_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/permissions"
)

func TestRoles(t *testing.T) {
	t.Parallel()
	needs := []permissions.Need{
		{Script: "b.js", Group: "apps", Resource: "deployments", Verb: "watch", Why: "watch"},
		{Script: "a.js", Group: "apps", Resource: "deployments", Verb: "list", Why: "watch"},
		{Script: "a.js", Group: "apps", Resource: "deployments", Verb: "patch", Namespace: "web", Why: "k8s.patch at a.js:3"},
		{Script: "a.js", Group: "apps", Resource: "deployments", Verb: "list", Namespace: "web", Why: "k8s.list at a.js:4"},
		{Script: "(--leader-elect)", Group: "coordination.k8s.io", Resource: "leases", Verb: "get", Own: true, ResourceName: "l", Why: "lease"},
	}
	got := permissions.Roles(needs)
	want := []permissions.Role{
		{Cluster: true, Rules: []permissions.Rule{{Group: "apps", Resource: "deployments", Verbs: []string{"list", "watch"},
			Reasons: []string{"a.js: k8s.list at a.js:4, watch", "b.js: watch"}}}},
		{Own: true, Rules: []permissions.Rule{{Group: "coordination.k8s.io", Resource: "leases", ResourceName: "l", Verbs: []string{"get"},
			Reasons: []string{"(--leader-elect): lease"}}}},
		{Namespace: "web", Rules: []permissions.Rule{{Group: "apps", Resource: "deployments", Verbs: []string{"patch"},
			Reasons: []string{"a.js: k8s.patch at a.js:3"}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("roles\n got %+v\nwant %+v", got, want)
	}
	// Shuffled input, same output: stable for diffs.
	rev := []permissions.Need{needs[4], needs[3], needs[2], needs[1], needs[0]}
	if again := permissions.Roles(rev); !reflect.DeepEqual(again, got) {
		t.Errorf("roles depend on the order of needs:\n%+v\n%+v", again, got)
	}
	var out bytes.Buffer
	if err := permissions.WriteYAML(&out, got, permissions.Identity{Namespace: "ops", Name: "runner"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"kind: ClusterRole\n", "kind: Role\nmetadata:\n  name: runner\n  namespace: web\n",
		"kind: Role\nmetadata:\n  name: runner\n  namespace: ops\n", "  # a.js: k8s.patch at a.js:3\n  - apiGroups: [apps]\n    resources: [deployments]\n    verbs: [patch]\n",
		"    resourceNames: [l]\n", "    name: runner\n    namespace: ops\n"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("YAML lacks %q:\n%s", s, out.String())
		}
	}
}

func TestNeedRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		need permissions.Need
		want string
	}{
		{permissions.Need{Group: "apps", Resource: "deployments", Verb: "patch"}, "kubectl create clusterrole NAME --verb=patch --resource=deployments.apps"},
		{permissions.Need{Resource: "secrets", Verb: "get", Namespace: "a"}, "kubectl create role NAME -n a --verb=get --resource=secrets"},
		{permissions.Need{Group: "coordination.k8s.io", Resource: "leases", Verb: "get", Own: true, ResourceName: "l"},
			"kubectl create role NAME --verb=get --resource=leases.coordination.k8s.io --resource-name=l"},
	}
	for _, tt := range tests {
		if got := tt.need.Rule(); got != tt.want {
			t.Errorf("Rule() = %q, want %q", got, tt.want)
		}
	}
}
