package inspect

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// What Explain tells of one object, script by script: whether a watch shows it, and the object
// as the debug views show it. Pure functions of the watch and the object.

// Judge is whether watch, one watch of a script on res, shows the object key (obj: as the
// server has it now, nil when it does not exist), and if not the first reason why.
func Judge(res dynamicinformer.Resource, watch dynamicinformer.Key, key string, obj scripting.Object) inspection.Delivery {
	w := &inspection.WatchView{Resource: res.String(), Namespace: watch.Namespace, LabelSelector: watch.LabelSelector, FieldSelector: watch.FieldSelector}
	d := inspection.Delivery{Watch: w}
	ns, _, _ := strings.Cut(key, "/")
	if watch.Namespace != "" && res.Namespaced && ns != watch.Namespace {
		d.Reason, d.Detail = "namespace", fmt.Sprintf("the watch covers namespace %s only", watch.Namespace)
		return d
	}
	if obj == nil {
		d.Reason, d.Detail = "not found", "the object does not exist on the server"
		return d
	}
	if sel, err := labels.Parse(watch.LabelSelector); err == nil && !sel.Matches(labels.Set(objectLabels(obj))) {
		d.Reason = "selector"
		d.Detail = fmt.Sprintf("label selector %q does not match the object's labels %s", watch.LabelSelector, labels.Set(objectLabels(obj)))
		return d
	}
	if watch.FieldSelector != "" {
		if sel, err := fields.ParseSelector(watch.FieldSelector); err == nil && !sel.Matches(fieldSet(sel, obj)) {
			d.Reason, d.Detail = "field selector", fmt.Sprintf("field selector %q does not match the object", watch.FieldSelector)
			return d
		}
	}
	d.Delivered = true
	return d
}

// fieldSet holds the object's values of the fields sel names (metadata.name,
// spec.nodeName, ...), read as paths into the object.
func fieldSet(sel fields.Selector, obj scripting.Object) fields.Set {
	set := fields.Set{}
	for _, r := range sel.Requirements() {
		v, found, _ := unstructured.NestedFieldNoCopy(obj, strings.Split(r.Field, ".")...)
		if found {
			set[r.Field] = fmt.Sprint(v)
		}
	}
	return set
}

// Redact is obj as the debug views show it: a Secret's data and stringData values are
// replaced, as the log never shows them.
func Redact(res dynamicinformer.Resource, obj scripting.Object) scripting.Object {
	if res.GVR != secretsResource || obj == nil {
		return obj
	}
	out := make(scripting.Object, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			red := make(map[string]any, len(m))
			for k := range m {
				red[k] = "<redacted>"
			}
			out[field] = red
		}
	}
	// kubectl apply keeps the whole applied object, data included, in an annotation.
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if ann, ok := meta["annotations"].(map[string]any); ok && ann[lastApplied] != nil {
			m, a := make(map[string]any, len(meta)), make(map[string]any, len(ann))
			for k, v := range meta {
				m[k] = v
			}
			for k, v := range ann {
				a[k] = v
			}
			a[lastApplied] = "<redacted>"
			m["annotations"] = a
			out["metadata"] = m
		}
	}
	return out
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

var secretsResource = corev1.SchemeGroupVersion.WithResource("secrets")

// objectLabels returns obj's metadata.labels as strings.
func objectLabels(obj scripting.Object) map[string]string {
	meta, _ := obj["metadata"].(map[string]any)
	raw, _ := meta["labels"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// Deliveries judges, for every live version, whether it is shown the object (obj nil: it is
// not on the server); paused tells which scripts are paused.
func Deliveries(live []Live, res dynamicinformer.Resource, key string, obj scripting.Object, paused func(script string) bool) []inspection.Delivery {
	out := []inspection.Delivery{}
	for _, v := range live {
		d := inspection.Delivery{Script: v.Script(), Version: v.Hash(), State: v.State()}
		d.Cached = v.Store().Get(res.String(), key) != nil
		var watched []string
		var closest *inspection.Delivery
		for _, w := range v.Watches() {
			if w.Resource.String() != res.String() {
				watched = append(watched, w.Resource.String())
				continue
			}
			verdict := Judge(w.Resource, w.Key, key, obj)
			if verdict.Delivered || closest == nil {
				closest = &verdict
			}
			if verdict.Delivered {
				break
			}
		}
		if closest == nil {
			d.Reason, d.Detail = "not watched", "the script watches "+strings.Join(watched, ", ")
		} else {
			d.Delivered, d.Reason, d.Detail, d.Watch = closest.Delivered, closest.Reason, closest.Detail, closest.Watch
		}
		if d.Delivered && v.State() == "syncing" {
			d.Delivered, d.Reason, d.Detail = false, "syncing", "this version is still replaying the cache; the previous one, if any, serves"
		}
		if paused(v.Script()) {
			d.Detail = strings.TrimPrefix(d.Detail+"; the script is paused", "; ")
		}
		out = append(out, d)
	}
	return out
}
