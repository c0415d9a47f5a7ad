package permissions

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Identity names the ServiceAccount the rules are bound to. An empty Namespace leaves it out
// of every object, for kustomize to fill in (deploy/).
type Identity struct {
	Namespace, Name string
}

// label marks every object printed.
var label = map[string]string{"app.kubernetes.io/name": "jsinformer"}

// Objects are the ServiceAccount, the ClusterRole and its binding (when some need is
// cluster-wide) and one Role and binding per namespace, in that order.
func Objects(roles []Role, id Identity) []any {
	roles = placed(roles, id.Namespace)
	meta := func(name, ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: label}
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: id.Name, Namespace: id.Namespace}}
	out := []any{&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: meta(id.Name, id.Namespace)}}
	for _, r := range roles {
		if r.Cluster {
			out = append(out,
				&rbacv1.ClusterRole{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRole"), ObjectMeta: meta(id.Name, ""), Rules: policy(r.Rules)},
				&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRoleBinding"), ObjectMeta: meta(id.Name, ""),
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: id.Name}, Subjects: subject})
			continue
		}
		ns := r.Namespace
		if r.Own {
			ns = id.Namespace
		}
		out = append(out,
			&rbacv1.Role{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "Role"), ObjectMeta: meta(id.Name, ns), Rules: policy(r.Rules)},
			&rbacv1.RoleBinding{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "RoleBinding"), ObjectMeta: meta(id.Name, ns),
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: id.Name}, Subjects: subject})
	}
	return out
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func policy(rules []Rule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	for _, r := range rules {
		p := rbacv1.PolicyRule{APIGroups: []string{r.Group}, Resources: []string{r.Resource}, Verbs: r.Verbs}
		if r.ResourceName != "" {
			p.ResourceNames = []string{r.ResourceName}
		}
		out = append(out, p)
	}
	return out
}

// WriteJSON writes the objects as one v1 List.
func WriteJSON(w io.Writer, roles []Role, id Identity) error {
	var items []json.RawMessage
	for _, o := range Objects(roles, id) {
		b, err := json.Marshal(o)
		if err != nil {
			return fmt.Errorf("encode %T: %w", o, err)
		}
		items = append(items, b)
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(list)
}

// WriteYAML writes the objects as YAML documents, each rule commented with the scripts that
// need it and why; header (comment lines without "# ") comes first.
func WriteYAML(w io.Writer, roles []Role, id Identity, header []string) error {
	var b strings.Builder
	for _, h := range header {
		b.WriteString(strings.TrimRight("# "+h, " ") + "\n")
	}
	writeHead(&b, "v1", "ServiceAccount", id.Name, id.Namespace)
	for _, r := range placed(roles, id.Namespace) {
		kind, ns := "Role", r.Namespace
		if r.Own {
			ns = id.Namespace
		}
		if r.Cluster {
			kind, ns = "ClusterRole", ""
		}
		b.WriteString("---\n")
		writeHead(&b, "rbac.authorization.k8s.io/v1", kind, id.Name, ns)
		b.WriteString("rules:\n")
		for _, rule := range r.Rules {
			writeRule(&b, rule)
		}
		b.WriteString("---\n")
		writeHead(&b, "rbac.authorization.k8s.io/v1", kind+"Binding", id.Name, ns)
		fmt.Fprintf(&b, "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: %s\n  name: %s\n", kind, id.Name)
		fmt.Fprintf(&b, "subjects:\n  - kind: ServiceAccount\n    name: %s\n", id.Name)
		if id.Namespace != "" {
			fmt.Fprintf(&b, "    namespace: %s\n", id.Namespace)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHead(b *strings.Builder, apiVersion, kind, name, ns string) {
	fmt.Fprintf(b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n", apiVersion, kind, name)
	if ns != "" {
		fmt.Fprintf(b, "  namespace: %s\n", ns)
	}
	b.WriteString("  labels:\n    app.kubernetes.io/name: jsinformer\n")
}

func writeRule(b *strings.Builder, r Rule) {
	for _, reason := range r.Reasons {
		fmt.Fprintf(b, "  # %s\n", reason)
	}
	group := r.Group
	if group == "" {
		group = `""`
	}
	fmt.Fprintf(b, "  - apiGroups: [%s]\n    resources: [%s]\n", group, r.Resource)
	if r.ResourceName != "" {
		fmt.Fprintf(b, "    resourceNames: [%s]\n", r.ResourceName)
	}
	fmt.Fprintf(b, "    verbs: [%s]\n", strings.Join(r.Verbs, ", "))
}

// Header is the comment that opens a printed file: the command that generated it, and the
// calls whose needs it cannot contain.
func Header(command string, rep *Report) []string {
	out := []string{
		"Generated by `" + command + "` from the scripts: do not edit, run it again.",
		"Each rule names the scripts that need it and why. A script that makes a k8s call whose",
		"resource is known at run time only declares what it needs in `permissions`",
		"(docs/permissions.md).",
	}
	for _, d := range rep.Dynamic {
		out = append(out, "NOT COVERED: "+d.String())
	}
	for _, s := range rep.Unwatched {
		out = append(out, s+": validate/mutate only and never reads ctx.cache: no list or watch of its watches (no informer)")
	}
	if allow := rep.AllowNet(); len(allow) > 0 {
		out = append(out, "The scripts' net declarations need the runner's --allow-net "+strings.Join(allow, ","))
		for _, d := range rep.Net {
			out = append(out, "  "+d.Script+": net "+strings.Join(d.Entries, ", "))
		}
	}
	return out
}
