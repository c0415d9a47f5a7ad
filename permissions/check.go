package permissions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// Grants are the rules of the ClusterRoles and Roles of an RBAC file, taken as bound to the
// runner (bindings are not read). A Role without a namespace is in the runner's own: the one
// kustomize fills in.
type Grants struct {
	roles []granted
}

type granted struct {
	kind, name, namespace string
	rules                 []rbacv1.PolicyRule
}

// ReadGrants reads the ClusterRoles and Roles of YAML or JSON documents (other kinds are
// skipped).
func ReadGrants(data []byte) (Grants, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var g Grants
	for {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Rules []rbacv1.PolicyRule `json:"rules"`
			Items []json.RawMessage   `json:"items"`
		}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return g, nil
		}
		if err != nil {
			return Grants{}, fmt.Errorf("read RBAC objects: %w", err)
		}
		for _, item := range obj.Items { // a List, as `runner rbac -o json` prints
			sub, err := ReadGrants(item)
			if err != nil {
				return Grants{}, err
			}
			g.roles = append(g.roles, sub.roles...)
		}
		if obj.Kind == "ClusterRole" || obj.Kind == "Role" {
			g.roles = append(g.roles, granted{kind: obj.Kind, name: obj.Metadata.Name, namespace: obj.Metadata.Namespace, rules: obj.Rules})
		}
	}
}

// Allows reports whether some rule grants the need where it is needed.
func (g Grants) Allows(n Need) bool {
	for _, r := range g.roles {
		if !r.covers(n) {
			continue
		}
		for _, rule := range r.rules {
			if ruleAllows(rule, n) {
				return true
			}
		}
	}
	return false
}

// covers reports whether a role's scope includes where n is needed.
func (r granted) covers(n Need) bool {
	switch {
	case r.kind == "ClusterRole":
		return true
	case n.Own:
		return true // a Role of the file is in the runner's namespace, named or left to kustomize
	}
	return n.Namespace != "" && r.namespace == n.Namespace
}

func ruleAllows(rule rbacv1.PolicyRule, n Need) bool {
	return matches(rule.APIGroups, n.Group) && matches(rule.Resources, n.Resource) && matches(rule.Verbs, n.Verb) &&
		(len(rule.ResourceNames) == 0 || (n.ResourceName != "" && slices.Contains(rule.ResourceNames, n.ResourceName)))
}

func matches(list []string, v string) bool {
	return slices.Contains(list, v) || slices.Contains(list, rbacv1.ResourceAll)
}

// Missing are the needs no rule grants.
func (g Grants) Missing(needs []Need) []Need {
	var out []Need
	for _, n := range needs {
		if !g.Allows(n) {
			out = append(out, n)
		}
	}
	return out
}

// Extra describes what the rules grant that no need asks for: each verb on each resource
// (and name) of each rule that no need uses, and every wildcard.
func (g Grants) Extra(needs []Need) []string {
	var out []string
	for _, r := range g.roles {
		for _, rule := range r.rules {
			out = append(out, r.extra(rule, needs)...)
		}
	}
	return out
}

func (r granted) extra(rule rbacv1.PolicyRule, needs []Need) []string {
	var out []string
	where := fmt.Sprintf("%s %s", r.kind, r.name)
	if r.namespace != "" {
		where += " in " + r.namespace
	}
	names := rule.ResourceNames
	if len(names) == 0 {
		names = []string{""}
	}
	for _, group := range rule.APIGroups {
		for _, res := range rule.Resources {
			for _, verb := range rule.Verbs {
				for _, name := range names {
					one := rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{res}, Verbs: []string{verb}}
					if name != "" {
						one.ResourceNames = []string{name}
					}
					if !slices.ContainsFunc(needs, func(n Need) bool { return r.covers(n) && exactly(one, n) }) {
						out = append(out, fmt.Sprintf("%s grants %s", where, Need{Group: group, Resource: res, Verb: verb, ResourceName: name}.what()))
					}
				}
			}
		}
	}
	return out
}

// exactly reports whether a one-verb rule is what n needs, wildcards never.
func exactly(rule rbacv1.PolicyRule, n Need) bool {
	return rule.APIGroups[0] == n.Group && rule.Resources[0] == n.Resource && rule.Verbs[0] == n.Verb &&
		(len(rule.ResourceNames) == 0 && n.ResourceName == "" || len(rule.ResourceNames) == 1 && rule.ResourceNames[0] == n.ResourceName)
}

// what is "verb group/resource" with its name, for messages.
func (n Need) what() string {
	s := n.Verb + " " + n.GroupResource()
	if n.ResourceName != "" {
		s += fmt.Sprintf(" named %q", n.ResourceName)
	}
	return s
}
