package scripting

import (
	"errors"
	"strings"
	"testing"
)

// TestNamespaceSelectionIsRead: namespaceSelector and excludeNamespaces select namespaces as
// a webhook does, and the protected namespaces never.
func TestNamespaceSelectionIsRead(t *testing.T) {
	t.Parallel()
	src := `export default { validate(obj) {}, admission: {
  namespaceSelector: { matchLabels: { env: "prod" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["test"] }] },
  excludeNamespaces: ["legacy", "a-b"] } }`
	spec := newTestScript(t, "v.js", src, Options{}).Definition().Admission
	if got := strings.Join(spec.ExcludeNamespaces, ","); got != "a-b,legacy" {
		t.Errorf("excludeNamespaces = %q, want sorted", got)
	}
	sel := spec.Namespaces()
	for _, tc := range []struct {
		ns     string
		labels map[string]string
		want   bool
	}{
		{"shop", map[string]string{"env": "prod"}, true},
		{"shop", map[string]string{"env": "prod", "tier": "test"}, false},
		{"shop", map[string]string{"env": "dev"}, false},
		{"shop", nil, false},
		{"legacy", map[string]string{"env": "prod"}, false},
		{"kube-system", map[string]string{"env": "prod"}, false},
	} {
		if got := sel.Selects(tc.ns, tc.labels); got != tc.want || !sel.ByLabels() {
			t.Errorf("Selects(%s, %v) = %v, want %v", tc.ns, tc.labels, got, tc.want)
		}
	}
	byName := newTestScript(t, "n.js", `export default { validate(obj) {}, admission: {
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "shop" } } } }`, Options{}).Definition().Admission.Namespaces()
	if !byName.Selects("shop", nil) || byName.Selects("other", nil) {
		t.Error("a selector on kubernetes.io/metadata.name does not select by the namespace's name")
	}
	all := newTestScript(t, "a.js", `export default { validate(obj) {} }`, Options{}).Definition().Admission.Namespaces()
	if all.ByLabels() || !all.Selects("anything", nil) || all.Selects("kube-node-lease", nil) {
		t.Error("without selection: every namespace but the protected ones, by name")
	}
}

func TestNamespaceSelectionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, admission, want string }{
		{"not an object", `namespaceSelector: "env=prod"`,
			`v.js:2: 'admission.namespaceSelector' must be a label selector such as { matchLabels: { "policy": "enforced" } }, got a string`},
		{"unknown key", `namespaceSelector: { matchLabel: { a: "b" } }`, "v.js:2: unknown key 'matchLabel' in 'admission.namespaceSelector'; did you mean 'matchLabels'?"},
		{"unknown expression key", `namespaceSelector: { matchExpressions: [{ key: "a", op: "In", values: ["b"] }] }`,
			"unknown key 'op' in 'admission.namespaceSelector.matchExpressions[0]'; valid keys are key, operator, values"},
		{"bad operator", `namespaceSelector: { matchExpressions: [{ key: "a", operator: "in", values: ["b"] }] }`,
			`v.js:2: admission.namespaceSelector.matchExpressions[0].operator: "in" is not an operator; valid operators are In, NotIn, Exists, DoesNotExist; did you mean "In"?`},
		{"operator far from any", `namespaceSelector: { matchExpressions: [{ key: "a", operator: "Equals", values: ["b"] }] }`,
			`operator: "Equals" is not an operator; valid operators are In, NotIn, Exists, DoesNotExist`},
		{"In without values", `namespaceSelector: { matchExpressions: [{ key: "a", operator: "In" }] }`,
			"v.js:2: admission.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"},
		{"bad label key", `namespaceSelector: { matchLabels: { "a b": "c" } }`, `v.js:2: admission.namespaceSelector.matchLabels: Invalid value: "a b"`},
		{"bad label value", `namespaceSelector: { matchLabels: { a: 3 } }`, "'admission.namespaceSelector' is not a label selector: cannot unmarshal number"},
		{"excludeNamespaces not a list", `excludeNamespaces: "x"`, `v.js:2: 'admission.excludeNamespaces' must be a list of namespace names such as ["sandbox"], got a string`},
		{"excludeNamespaces bad name", `excludeNamespaces: ["Prod"]`, `'admission.excludeNamespaces' has a string ("Prod"); a namespace name is a DNS label such as "sandbox"`},
		{"excludeNamespaces twice", `excludeNamespaces: ["a", "a"]`, `'admission.excludeNamespaces' lists "a" twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := instantiate("v.js", "export default { validate() {}, admission: {\n  "+tc.admission+" } }", Options{})
			if err == nil || !errors.Is(err, ErrInvalidDefinition) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant one containing %q", err, tc.want)
			}
		})
	}
}
