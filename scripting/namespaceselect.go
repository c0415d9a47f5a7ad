package scripting

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dop251/goja"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Selecting namespaces: `admission.namespaceSelector` (matchLabels and matchExpressions over
// a namespace's labels, as a webhook's namespaceSelector) and `admission.excludeNamespaces`
// (names) narrow what a script admits and audits, within its watch's namespace. The runner
// registers them in the script's webhook entry (package admission) on top of the namespaces
// that protect the cluster (ProtectedNamespaces), which no script can select; audit and
// `runner test` apply the same selection from the Namespace objects (NamespaceSelection).

// ProtectedNamespaces are the namespaces no webhook entry of the runner ever matches and no
// audit judges: the control plane's own objects (kube-system) and the nodes' heartbeats
// (kube-node-lease, whose Leases a Fail webhook with no runner answering would stop, making
// every node NotReady). Do not modify.
var ProtectedNamespaces = []string{"kube-node-lease", "kube-system"}

// NamespaceNameLabel is the label the API server sets on every Namespace to its name, which
// webhooks select namespaces by name with.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// maxExcludeNamespaces bounds admission.excludeNamespaces.
const maxExcludeNamespaces = 256

// readNamespaceSelector reads admission.namespaceSelector: a label selector, checked as the
// API server checks a webhook's (keys, operators, values), so that a mistake is a load
// error with the script's line and not an entry the API server refuses.
func readNamespaceSelector(v goja.Value, l locator) (*metav1.LabelSelector, error) {
	if isMissing(v) {
		return nil, nil
	}
	bad := func(msg string) error {
		return invalidf(l.file, l.line("namespaceSelector"), "'admission.namespaceSelector' "+msg)
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return nil, bad(`must be a label selector such as { matchLabels: { "policy": "enforced" } }, got ` + typeName(v))
	}
	if err := l.checkKeys(obj, "admission.namespaceSelector", []string{"matchLabels", "matchExpressions"}); err != nil {
		return nil, err
	}
	if exprs, ok := obj.Get("matchExpressions").(*goja.Object); ok && exprs.ClassName() == "Array" {
		for i := range exprs.Get("length").ToInteger() {
			if e, ok := exprs.Get(fmt.Sprint(i)).(*goja.Object); ok && e.ClassName() == "Object" {
				where := fmt.Sprintf("admission.namespaceSelector.matchExpressions[%d]", i)
				if err := l.checkKeys(e, where, []string{"key", "operator", "values"}); err != nil {
					return nil, err
				}
			}
		}
	}
	raw, err := json.Marshal(v.Export())
	if err != nil {
		return nil, bad("is not a label selector: " + err.Error())
	}
	var sel metav1.LabelSelector
	if err := json.Unmarshal(raw, &sel); err != nil {
		return nil, bad("is not a label selector: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	if errs := metav1validation.ValidateLabelSelector(&sel, metav1validation.LabelSelectorValidationOptions{},
		field.NewPath("admission", "namespaceSelector")); len(errs) > 0 {
		return nil, invalidf(l.file, l.line("namespaceSelector"), selectorError(errs[0]))
	}
	if _, err := metav1.LabelSelectorAsSelector(&sel); err != nil {
		return nil, bad(err.Error())
	}
	return &sel, nil
}

// selectorError is the API server's complaint about a selector; a bad operator is named with
// the valid ones, and the one meant when it is only written in another case.
func selectorError(e *field.Error) string {
	if !strings.HasSuffix(e.Field, ".operator") {
		return e.Error()
	}
	ops := []string{"In", "NotIn", "Exists", "DoesNotExist"}
	msg := fmt.Sprintf("%s: %q is not an operator; valid operators are %s", e.Field, fmt.Sprint(e.BadValue), strings.Join(ops, ", "))
	if s := closest(fmt.Sprint(e.BadValue), ops); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

// readExcludeNamespaces reads admission.excludeNamespaces: namespace names, sorted.
func readExcludeNamespaces(v goja.Value, l locator) ([]string, error) {
	if isMissing(v) {
		return nil, nil
	}
	bad := func(msg string) error {
		return invalidf(l.file, l.line("excludeNamespaces"), "'admission.excludeNamespaces' "+msg)
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, bad(`must be a list of namespace names such as ["sandbox"], got ` + typeName(v))
	}
	n := obj.Get("length").ToInteger()
	if n > maxExcludeNamespaces {
		return nil, bad(fmt.Sprintf("lists %d namespaces; at most %d", n, maxExcludeNamespaces))
	}
	out := make([]string, 0, n)
	for i := range n {
		el := obj.Get(fmt.Sprint(i))
		name := el.String()
		switch {
		case !isString(el) || len(validation.IsDNS1123Label(name)) > 0:
			return nil, bad(fmt.Sprintf("has %s; a namespace name is a DNS label such as \"sandbox\"", typeName(el)))
		case slices.Contains(out, name):
			return nil, bad(fmt.Sprintf("lists %q twice", name))
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// NamespaceSelection is which namespaces a script's admission and audit cover, its watch's
// namespace aside: not ProtectedNamespaces, not excludeNamespaces, and matched by
// namespaceSelector. The zero value selects every namespace but the protected ones.
type NamespaceSelection struct {
	selector labels.Selector // nil: every namespace
	exclude  []string
}

// Namespaces is a's NamespaceSelection.
func (a AdmissionSpec) Namespaces() NamespaceSelection {
	s := NamespaceSelection{exclude: a.ExcludeNamespaces}
	if a.NamespaceSelector != nil {
		s.selector, _ = metav1.LabelSelectorAsSelector(a.NamespaceSelector) // checked at load
	}
	return s
}

// ByLabels reports whether the selection reads a namespace's labels (a namespaceSelector);
// without one, names are enough.
func (s NamespaceSelection) ByLabels() bool { return s.selector != nil }

// Selects reports whether the namespace name, with nsLabels (nil when unknown: only its
// NamespaceNameLabel is assumed, as the API server sets it), is selected.
func (s NamespaceSelection) Selects(name string, nsLabels map[string]string) bool {
	if slices.Contains(ProtectedNamespaces, name) || slices.Contains(s.exclude, name) {
		return false
	}
	if s.selector == nil {
		return true
	}
	set := labels.Set{NamespaceNameLabel: name}
	for k, v := range nsLabels {
		set[k] = v
	}
	return s.selector.Matches(set)
}
