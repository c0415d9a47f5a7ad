package permissions

import (
	"cmp"
	"slices"
	"strings"
)

// Sort orders needs by namespace, group, resource, name, verb and script, so that everything
// printed from them is stable.
func Sort(needs []Need) {
	slices.SortFunc(needs, func(a, b Need) int {
		return cmp.Or(cmp.Compare(scopeKey(a), scopeKey(b)), cmp.Compare(a.Group, b.Group),
			cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.ResourceName, b.ResourceName),
			cmp.Compare(a.Verb, b.Verb), cmp.Compare(a.Script, b.Script), cmp.Compare(a.Why, b.Why))
	})
}

// scopeKey sorts cluster-wide needs first, then the runner's namespace, then the others.
func scopeKey(n Need) string {
	switch {
	case n.Own:
		return "1"
	case n.Namespace == "":
		return "0"
	}
	return "2" + n.Namespace
}

// Rule is one RBAC policy rule: verbs on one resource (of one name), with who needs it.
type Rule struct {
	Group        string
	Resource     string
	ResourceName string
	Verbs        []string // sorted
	// Reasons are "script: why, why" lines, sorted: the rule's comment.
	Reasons []string
}

// Role is the rules of one scope: cluster-wide (a ClusterRole), the runner's own namespace, or
// another namespace (Roles).
type Role struct {
	Cluster   bool
	Own       bool
	Namespace string
	Rules     []Rule
}

// Roles merges needs into rules, one per resource (and name) per scope, sorted. A namespaced
// need that a cluster-wide rule already grants adds only its reason to that rule.
func Roles(needs []Need) []Role {
	needs = slices.Clone(needs)
	Sort(needs)
	var out []Role
	cluster := map[string]*Rule{}
	for _, n := range needs {
		scoped := n.Own || n.Namespace != ""
		if scoped {
			if r, ok := cluster[ruleKey(n)]; ok && slices.Contains(r.Verbs, n.Verb) {
				addReason(r, n)
				continue
			}
		}
		role := roleFor(&out, n)
		r := ruleFor(role, n)
		if !scoped {
			cluster[ruleKey(n)] = r
		}
		if !slices.Contains(r.Verbs, n.Verb) {
			r.Verbs = append(r.Verbs, n.Verb)
			slices.Sort(r.Verbs)
		}
		addReason(r, n)
	}
	return out
}

func ruleKey(n Need) string { return n.Group + "\x00" + n.Resource + "\x00" + n.ResourceName }

func roleFor(roles *[]Role, n Need) *Role {
	want := Role{Cluster: !n.Own && n.Namespace == "", Own: n.Own, Namespace: n.Namespace}
	if n.Own {
		want.Namespace = ""
	}
	for i := range *roles {
		r := &(*roles)[i]
		if r.Cluster == want.Cluster && r.Own == want.Own && r.Namespace == want.Namespace {
			return r
		}
	}
	*roles = append(*roles, want)
	return &(*roles)[len(*roles)-1]
}

func ruleFor(role *Role, n Need) *Rule {
	for i := range role.Rules {
		r := &role.Rules[i]
		if r.Group == n.Group && r.Resource == n.Resource && r.ResourceName == n.ResourceName {
			return r
		}
	}
	role.Rules = append(role.Rules, Rule{Group: n.Group, Resource: n.Resource, ResourceName: n.ResourceName})
	return &role.Rules[len(role.Rules)-1]
}

// addReason records "script: why" on the rule, one line per script.
func addReason(r *Rule, n Need) {
	prefix := n.Script + ": "
	for i, line := range r.Reasons {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		whys := strings.Split(strings.TrimPrefix(line, prefix), ", ")
		if !slices.Contains(whys, n.Why) {
			whys = append(whys, n.Why)
			slices.Sort(whys)
			r.Reasons[i] = prefix + strings.Join(whys, ", ")
		}
		return
	}
	r.Reasons = append(r.Reasons, prefix+n.Why)
	slices.Sort(r.Reasons)
}

// placed is roles as printed for a runner in namespace ns: the Role of the runner's own
// namespace and the Role of namespace ns are one, so that the file holds one Role and one
// RoleBinding per namespace (two objects of the same name would make kustomize fail and a
// plain apply keep only the last). With ns "" (for kustomize to fill in) roles are unchanged.
func placed(roles []Role, ns string) []Role {
	if ns == "" {
		return roles
	}
	own := slices.IndexFunc(roles, func(r Role) bool { return r.Own })
	same := slices.IndexFunc(roles, func(r Role) bool { return !r.Own && !r.Cluster && r.Namespace == ns })
	if own < 0 || same < 0 {
		return roles
	}
	out := slices.Clone(roles)
	out[own] = Role{Own: true, Rules: mergeRules(roles[own].Rules, roles[same].Rules)}
	return slices.Delete(out, same, same+1)
}

// mergeRules is a's and b's rules, one per resource and name, with the verbs and reasons of
// both, sorted as Roles sorts them.
func mergeRules(a, b []Rule) []Rule {
	out := make([]Rule, 0, len(a)+len(b))
	for _, r := range slices.Concat(a, b) {
		i := slices.IndexFunc(out, func(o Rule) bool {
			return o.Group == r.Group && o.Resource == r.Resource && o.ResourceName == r.ResourceName
		})
		if i < 0 {
			out = append(out, Rule{Group: r.Group, Resource: r.Resource, ResourceName: r.ResourceName,
				Verbs: slices.Clone(r.Verbs), Reasons: slices.Clone(r.Reasons)})
			continue
		}
		out[i].Verbs = union(out[i].Verbs, r.Verbs)
		for _, line := range r.Reasons {
			script, whys, _ := strings.Cut(line, ": ")
			for why := range strings.SplitSeq(whys, ", ") {
				addReason(&out[i], Need{Script: script, Why: why})
			}
		}
	}
	slices.SortFunc(out, func(x, y Rule) int {
		return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(x.Resource, y.Resource), cmp.Compare(x.ResourceName, y.ResourceName))
	})
	return out
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
