package memcluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// selection is what a list or watch asks for: a namespace and label and field selectors.
type selection struct {
	namespace string // "" for all
	labels    labels.Selector
	fields    fields.Selector
	paths     []string // the field selector's fields, dotted
}

// newSelection parses selectors as the server does; a field the resource does not support
// for selection is the server's 400.
func newSelection(res *resource, namespace, labelSelector, fieldSelector string) (*selection, error) {
	if !res.namespaced {
		namespace = ""
	}
	ls, err := labels.Parse(labelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	sel := &selection{namespace: namespace, labels: ls, fields: fs}
	supported := selectableFields(res)
	for _, r := range fs.Requirements() {
		if !supported[r.Field] {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %s", r.Field, quotedSorted(supported)))
		}
		sel.paths = append(sel.paths, r.Field)
	}
	return sel, nil
}

func (s *selection) matches(obj *unstructured.Unstructured) bool {
	if obj == nil || (s.namespace != "" && obj.GetNamespace() != s.namespace) {
		return false
	}
	if !s.labels.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	set := fields.Set{}
	for _, p := range s.paths {
		set[p] = fieldValue(obj, p)
	}
	return s.fields.Matches(set)
}

// fieldValue reads a dotted field as a string, as field selectors compare them.
func fieldValue(obj *unstructured.Unstructured, path string) string {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(path, ".")...)
	if !ok {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// selectableFields are the fields the server lets lists and watches of res select on.
func selectableFields(res *resource) map[string]bool {
	out := map[string]bool{"metadata.name": true, "metadata.namespace": true}
	for _, f := range extraFields[res.groupResource().String()] {
		out[f] = true
	}
	return out
}

var extraFields = map[string][]string{
	"pods": {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
		"spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"},
	"secrets": {"type"},
	"events": {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
		"reason", "reportingComponent", "source", "type"},
	"namespaces":             {"status.phase"},
	"nodes":                  {"spec.unschedulable"},
	"replicationcontrollers": {"status.replicas"},
	"replicasets.apps":       {"status.replicas"},
	"jobs.batch":             {"status.successful"},
	"certificatesigningrequests.certificates.k8s.io": {"spec.signerName"},
}

func quotedSorted(set map[string]bool) string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, strconv.Quote(n))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
