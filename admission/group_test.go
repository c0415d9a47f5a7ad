package admission

import (
	"slices"
	"strings"
	"testing"

	kvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/jsinformer/jsinformer/scripting"
)

func groupEntry(script string, change func(*Entry)) Entry {
	e := Entry{Script: script, Validate: true, Mutate: true,
		Spec:  scripting.AdmissionSpec{Operations: []string{"CREATE", "UPDATE"}, FailurePolicy: "Fail", TimeoutSeconds: 5, Mode: "enforce"},
		Rules: []Rule{{Version: "v1", Resource: "configmaps", Namespaced: true}}}
	if change != nil {
		change(&e)
	}
	return e
}

func TestGroupsShareAnEntryOnlyWhenTheirWebhooksAreAlike(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []Entry
		kind    string
		want    [][]string
	}{
		{"same spec: one entry", []Entry{groupEntry("a.js", nil), groupEntry("b.js", nil), groupEntry("team/c.js", nil)},
			"validate", [][]string{{"a.js", "b.js", "team/c.js"}}},
		{"the mode is the server's: shared", []Entry{groupEntry("a.js", nil), groupEntry("b.js", func(e *Entry) { e.Spec.Mode = "audit" })},
			"validate", [][]string{{"a.js", "b.js"}}},
		{"another failurePolicy", []Entry{groupEntry("a.js", nil), groupEntry("b.js", func(e *Entry) { e.Spec.FailurePolicy = "Ignore" }), groupEntry("c.js", nil)},
			"validate", [][]string{{"a.js", "c.js"}, {"b.js"}}},
		{"other operations", []Entry{groupEntry("a.js", nil), groupEntry("b.js", func(e *Entry) { e.Spec.Operations = []string{"CREATE"} })},
			"mutate", [][]string{{"a.js"}, {"b.js"}}},
		{"other namespaces", []Entry{groupEntry("a.js", func(e *Entry) { e.Namespaces = []string{"x"} }), groupEntry("b.js", func(e *Entry) { e.Namespaces = []string{"y"} }),
			groupEntry("c.js", func(e *Entry) { e.Namespaces = []string{"x"} })}, "validate", [][]string{{"a.js", "c.js"}, {"b.js"}}},
		{"the same namespaces in another order, or twice: shared", []Entry{groupEntry("a.js", func(e *Entry) { e.Namespaces = []string{"x", "y"} }),
			groupEntry("b.js", func(e *Entry) { e.Namespaces = []string{"y", "x", "y"} })}, "validate", [][]string{{"a.js", "b.js"}}},
		{"another timeout", []Entry{groupEntry("a.js", nil), groupEntry("b.js", func(e *Entry) { e.Spec.TimeoutSeconds = 3 })},
			"validate", [][]string{{"a.js"}, {"b.js"}}},
		{"another label selector", []Entry{groupEntry("a.js", nil), groupEntry("b.js", func(e *Entry) { e.LabelSelector = "app=web" })},
			"validate", [][]string{{"a.js"}, {"b.js"}}},
		{"another resource", []Entry{groupEntry("a.js", nil), groupEntry("b.js", func(e *Entry) { e.Rules[0].Resource = "secrets" })},
			"validate", [][]string{{"a.js"}, {"b.js"}}},
		{"in order of name, whatever the entries' order", []Entry{groupEntry("c.js", nil), groupEntry("b.js", func(e *Entry) { e.Spec.FailurePolicy = "Ignore" }), groupEntry("a.js", nil)},
			"validate", [][]string{{"a.js", "c.js"}, {"b.js"}}},
		{"only the scripts defining the kind", []Entry{groupEntry("a.js", func(e *Entry) { e.Mutate = false }), groupEntry("b.js", nil), groupEntry("c.js", nil)},
			"mutate", [][]string{{"b.js", "c.js"}}},
		{"a name that is not DNS segments shares, encoded", []Entry{groupEntry("a.js", nil), groupEntry("My Policy.js", nil), groupEntry("c.js", nil)},
			"validate", [][]string{{"My Policy.js", "a.js", "c.js"}}},
		{"a name with an empty part keeps its own entry", []Entry{groupEntry("a.js", nil), groupEntry("x//b.js", nil), groupEntry("c.js", nil)},
			"validate", [][]string{{"a.js", "c.js"}, {"x//b.js"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got [][]string
			for _, g := range Groups(tt.entries, tt.kind) {
				got = append(got, g.Scripts)
				if g.Kind != tt.kind || g.Entry.Script != g.Scripts[0] {
					t.Errorf("group %+v: want kind %s and the first script's entry", g, tt.kind)
				}
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("groups %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGroupPathIsUnambiguous(t *testing.T) {
	t.Parallel()
	tests := [][]string{
		{"a.js", "b.js"},
		{"team-a/policy.js", "b.js", "x/y/z.js"},
		{"1/2.js", "2.js"},                                  // names that look like counts
		{"Policy.js", "a_b.js", "team A/x.js", "b32--x.js"}, // encoded (EncodeName)
	}
	for i, scripts := range tests {
		policy := []string{"Fail", "Ignore", "Ignore", "Fail"}[i]
		path := GroupPath("mutate", policy, scripts)
		kind, names, ok := route(path)
		if !ok || kind != "mutate" || !slices.Equal(names, scripts) || groupPolicy(path) != policy {
			t.Errorf("route(%q) = %s %q %v policy %q, want mutate %q %s", path, kind, names, ok, groupPolicy(path), scripts, policy)
		}
		if msgs := kvalidation.IsDNS1123Subdomain(strings.ReplaceAll(strings.Trim(path, "/"), "/", ".")); len(msgs) > 0 {
			t.Errorf("path %q has a segment a Service's path may not have: %v", path, msgs)
		}
	}
	if got := GroupPath("validate", "Fail", []string{"team-a/policy.js", "b.js"}); got != "/validate-group/fail/2/team-a/policy.js/1/b.js" {
		t.Errorf("GroupPath = %q", got)
	}
	// A path registered before paths carried the policy still routes, with none.
	if _, names, ok := route("/validate-group/1/a.js/1/b.js"); !ok || !slices.Equal(names, []string{"a.js", "b.js"}) || groupPolicy("/validate-group/1/a.js/1/b.js") != "" {
		t.Errorf("a path without its policy: %q %v", names, ok)
	}
	for _, bad := range []string{"/validate-group/", "/validate-group/fail/", "/validate-group/fail", "/validate-group/2/a.js", "/validate-group/x/a.js",
		"/validate-group/0", "/validate-group/1/a.js/3/b", "/validate-group/fail/fail/1/a.js", "/validate-group/1/a.js/fail/1/b.js"} {
		if _, names, ok := route(bad); ok {
			t.Errorf("route(%q) = %q, want refused", bad, names)
		}
	}
	if _, names, _ := route("/validate-group/1/a.js/1/a.js"); !slices.Equal(names, []string{"a.js"}) {
		t.Errorf("a script named twice: %q, want called once", names)
	}
	if _, names, _ := route("/validate/team/x.js"); !slices.Equal(names, []string{"team/x.js"}) {
		t.Errorf("the single-script path: %q", names)
	}
}

func TestGroupNamesAreValidAndDistinct(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("very-long-folder-name/", 12) + "policy.js"
	groups := []Group{
		{Kind: "validate", Scripts: []string{"a.js"}},
		{Kind: "validate", Scripts: []string{"a.js", "b.js"}},
		{Kind: "validate", Scripts: []string{"a.js", "c.js"}},
		{Kind: "mutate", Scripts: []string{"a.js", "b.js"}},
		{Kind: "validate", Scripts: []string{long, "b.js", "c.js"}},
		{Kind: "validate", Scripts: []string{"_"}},              // no letter or digit: no slug
		{Kind: "mutate", Scripts: []string{"日本/__.ts", "__/a"}}, // nor for the first script
	}
	seen := map[string]bool{}
	for _, g := range groups {
		name := g.Name()
		if msgs := kvalidation.IsFullyQualifiedName(nil, name); len(msgs) > 0 || len(name) > 253 {
			t.Errorf("name %q of %q is not a valid webhook name: %v", name, g.Scripts, msgs)
		}
		if seen[name] {
			t.Errorf("name %q given twice", name)
		}
		seen[name] = true
		if name != g.Name() {
			t.Errorf("the name of %q changes", g.Scripts)
		}
	}
	if got := (Group{Kind: "validate", Scripts: []string{"a.js"}}); got.Name() != WebhookName("a.js", "validate") || got.Path() != "/validate/a.js" {
		t.Errorf("a script alone: %s %s, want its own entry's name and path", got.Name(), got.Path())
	}
}
