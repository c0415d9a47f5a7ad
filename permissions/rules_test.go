package permissions_test

import (
	"bytes"
	"fmt"
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

// TestOneRolePerNamespace: what the runner's own namespace needs (admission's Secret) and what
// a script needs in the namespace the runner runs in are one Role and one RoleBinding, in YAML
// and JSON, with the verbs and reasons of both; and the printed file grants all of it when
// read as the API server holds it.
func TestOneRolePerNamespace(t *testing.T) {
	t.Parallel()
	needs := []permissions.Need{
		{Script: "policy.js", Resource: "secrets", Verb: "get", ResourceName: "hooks-tls", Own: true, Why: "admission"},
		{Script: "policy.js", Resource: "secrets", Verb: "create", Own: true, Why: "admission"},
		{Script: "slack.js", Resource: "secrets", Verb: "get", ResourceName: "hooks-tls", Namespace: "ops", Why: "k8s.get at slack.js:3"},
		{Script: "slack.js", Resource: "configmaps", Verb: "get", Namespace: "ops", Why: "k8s.get at slack.js:4"},
		{Script: "slack.js", Resource: "configmaps", Verb: "get", Namespace: "web", Why: "k8s.get at slack.js:5"},
	}
	roles := permissions.Roles(needs)
	id := permissions.Identity{Namespace: "ops", Name: "runner"}
	var out bytes.Buffer
	if err := permissions.WriteYAML(&out, roles, id, nil); err != nil {
		t.Fatal(err)
	}
	yaml := out.String()
	for kind, want := range map[string]int{"kind: Role\nmetadata:\n  name: runner\n  namespace: ops\n": 1,
		"kind: RoleBinding\nmetadata:\n  name: runner\n  namespace: ops\n": 1, "kind: Role\nmetadata:\n  name: runner\n  namespace: web\n": 1} {
		if got := strings.Count(yaml, kind); got != want {
			t.Errorf("%d of %q, want %d:\n%s", got, kind, want, yaml)
		}
	}
	merged := "  # policy.js: admission\n  # slack.js: k8s.get at slack.js:3\n  - apiGroups: [\"\"]\n    resources: [secrets]\n    resourceNames: [hooks-tls]\n    verbs: [get]\n"
	if !strings.Contains(yaml, merged) {
		t.Errorf("YAML lacks the merged rule %q:\n%s", merged, yaml)
	}
	kinds := map[string]int{}
	for _, o := range permissions.Objects(roles, id) {
		kinds[reflect.TypeOf(o).Elem().Name()]++
	}
	if kinds["Role"] != 2 || kinds["RoleBinding"] != 2 {
		t.Errorf("Objects: %v, want a Role and a RoleBinding in each of ops and web", kinds)
	}
	grants, err := permissions.ReadGrants(out.Bytes(), "ops")
	if err != nil {
		t.Fatal(err)
	}
	if missing := grants.Missing(needs); len(missing) > 0 {
		t.Errorf("the printed file lacks %v", missing)
	}
	// With the namespace left to kustomize nothing can be merged: the Roles stay apart.
	out.Reset()
	if err := permissions.WriteYAML(&out, roles, permissions.Identity{Name: "runner"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "\nkind: Role\n"); got != 3 {
		t.Errorf("%d Roles without a namespace for the runner, want 3:\n%s", got, out.String())
	}
}

// TestReadGrantsAsApplied: two Roles of one name in one namespace are one object once applied,
// the last; a Role without a namespace is in the runner's.
func TestReadGrantsAsApplied(t *testing.T) {
	t.Parallel()
	const role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: runner\n%s" +
		"rules:\n- apiGroups: [\"\"]\n  resources: [%s]\n  verbs: [get]\n---\n"
	secrets := permissions.Need{Script: "policy.js", Resource: "secrets", Verb: "get", Own: true, Why: "admission"}
	maps := permissions.Need{Script: "slack.js", Resource: "configmaps", Verb: "get", Namespace: "ops", Why: "k8s.get"}
	for _, tt := range []struct {
		name, file, own string
		missing         []permissions.Need
	}{
		{"two Roles of one name: the last wins", fmt.Sprintf(role, "  namespace: ops\n", "secrets") + fmt.Sprintf(role, "  namespace: ops\n", "configmaps"),
			"ops", []permissions.Need{secrets}},
		{"the same, the other order", fmt.Sprintf(role, "  namespace: ops\n", "configmaps") + fmt.Sprintf(role, "  namespace: ops\n", "secrets"),
			"ops", []permissions.Need{maps}},
		{"a Role without a namespace is in the runner's", fmt.Sprintf(role, "", "secrets") + fmt.Sprintf(role, "  namespace: ops\n", "configmaps"),
			"ops", []permissions.Need{secrets}},
		{"in another namespace, both count", fmt.Sprintf(role, "", "secrets") + fmt.Sprintf(role, "  namespace: ops\n", "configmaps"),
			"jsinformer", nil},
		{"a Role elsewhere does not grant the runner's namespace", fmt.Sprintf(role, "  namespace: web\n", "secrets"),
			"ops", []permissions.Need{secrets, maps}},
	} {
		grants, err := permissions.ReadGrants([]byte(tt.file), tt.own)
		if err != nil {
			t.Fatal(err)
		}
		if got := grants.Missing([]permissions.Need{secrets, maps}); !reflect.DeepEqual(got, tt.missing) {
			t.Errorf("%s: missing %v, want %v", tt.name, got, tt.missing)
		}
	}
}
