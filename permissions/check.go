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

// Grants are the rules of the ClusterRoles and Roles of an RBAC file as the API server holds
// them once the file is applied, taken as bound to the runner (bindings are not read).
type Grants struct {
	roles []granted // in the order first read
	// own is the runner's namespace, "" when not known (see ReadGrants).
	own string
}

type granted struct {
	kind, name, namespace string
	rules                 []rbacv1.PolicyRule
}

// ReadGrants reads the ClusterRoles and Roles of YAML or JSON documents (other kinds are
// skipped) as applying them leaves them: an object replaces an earlier one of the same kind,
// namespace and name. own is the runner's namespace, where a Role without one is applied
// (kubectl apply -n, kustomize's namespace); "" when not known, and a Role then counts for
// the runner's namespace whatever namespace it names.
func ReadGrants(data []byte, own string) (Grants, error) {
	g := Grants{own: own}
	if err := g.read(data); err != nil {
		return Grants{}, err
	}
	return g, nil
}

func (g *Grants) read(data []byte) error {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
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
			return nil
		}
		if err != nil {
			return fmt.Errorf("read RBAC objects: %w", err)
		}
		for _, item := range obj.Items { // a List, as `runner rbac -o json` prints
			if err := g.read(item); err != nil {
				return err
			}
		}
		if obj.Kind == "ClusterRole" || obj.Kind == "Role" {
			g.put(granted{kind: obj.Kind, name: obj.Metadata.Name, namespace: obj.Metadata.Namespace, rules: obj.Rules})
		}
	}
}

// put records r, replacing the role of the same kind, namespace and name.
func (g *Grants) put(r granted) {
	switch {
	case r.kind == "ClusterRole":
		r.namespace = ""
	case r.namespace == "":
		r.namespace = g.own
	}
	i := slices.IndexFunc(g.roles, func(o granted) bool { return o.kind == r.kind && o.namespace == r.namespace && o.name == r.name })
	if i < 0 {
		g.roles = append(g.roles, r)
		return
	}
	g.roles[i] = r
}

// Allows reports whether some rule grants the need where it is needed.
func (g Grants) Allows(n Need) bool {
	for _, r := range g.roles {
		if !r.covers(n, g.own) {
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

// covers reports whether a role's scope includes where n is needed, for a runner in
// namespace own ("" not known).
func (r granted) covers(n Need, own string) bool {
	switch {
	case r.kind == "ClusterRole":
		return true
	case n.Own && own == "":
		return true // a Role of the file is in the runner's namespace, named or left to kustomize
	case n.Own:
		return r.namespace == own
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
			out = append(out, r.extra(rule, needs, g.own)...)
		}
	}
	return out
}

func (r granted) extra(rule rbacv1.PolicyRule, needs []Need, own string) []string {
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
					if !slices.ContainsFunc(needs, func(n Need) bool { return r.covers(n, own) && exactly(one, n) }) {
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
