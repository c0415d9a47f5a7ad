package jstest

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/engine"
)

// h.audit: the audit results (admission.audit) of the plugin, or of another loaded script, as
// the runner publishes them. The harness's engine audits as the runner's does (the same
// Auditor, on the virtual clock): every loaded audit script evaluates validate over its
// watch's objects when it loads and again on every change, and the harness's writes return
// only once the audits are done. The reports are those the runner's report writer would
// apply (engine.AuditReports); nothing is written to the in-memory cluster.

// auditOptionKeys are the properties h.audit accepts; jsinformer-test.d.ts declares the same.
var auditOptionKeys = []string{"script"}

func (h *harness) audit(v goja.Value) goja.Value {
	script := h.plugin
	if !missing(v) {
		var opts struct {
			Script string `json:"script"`
		}
		data, err := h.f.toGo(v)
		if err == nil {
			err = decodeStrict(data, &opts, auditOptionKeys...)
		}
		if err != nil {
			h.f.throw(fmt.Errorf("h.audit: %w", err))
		}
		if opts.Script != "" {
			script = filepath.ToSlash(filepath.Clean(opts.Script))
		}
	}
	reports, ok := h.off.AuditReports(script)
	if !ok {
		h.f.throw(fmt.Errorf("h.audit: %s does not audit: it is not loaded, or its definition has no validate with admission: { audit: true }", script))
	}
	return h.f.toJS(auditView(reports))
}

// auditView is h.audit's answer: every result flattened (sorted by namespace, kind, name),
// the counts by result, and the report objects themselves.
func auditView(reports []*unstructured.Unstructured) map[string]any {
	summary := map[string]any{}
	for _, o := range engine.AuditOutcomes {
		summary[o] = int64(0)
	}
	results := []map[string]any{}
	objects := make([]any, len(reports))
	for i, r := range reports {
		objects[i] = r.Object
		items, _, _ := unstructured.NestedSlice(r.Object, "results")
		for _, item := range items {
			if flat, ok := flatResult(item); ok {
				results = append(results, flat)
				summary[flat["result"].(string)] = summary[flat["result"].(string)].(int64) + 1
			}
		}
	}
	slices.SortStableFunc(results, func(a, b map[string]any) int {
		return cmp.Or(cmp.Compare(str(a["namespace"]), str(b["namespace"])), cmp.Compare(str(a["kind"]), str(b["kind"])),
			cmp.Compare(str(a["name"]), str(b["name"])))
	})
	return map[string]any{"results": results, "summary": summary, "reports": objects}
}

// flatResult is one report result as h.audit's results list it: the object's kind, namespace
// (for a namespaced one) and name, the result and the message.
func flatResult(item any) (map[string]any, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return nil, false
	}
	resources, _, _ := unstructured.NestedSlice(m, "resources")
	if len(resources) == 0 {
		return nil, false
	}
	subject, _ := resources[0].(map[string]any)
	out := map[string]any{"kind": subject["kind"], "name": subject["name"], "result": m["result"], "message": m["message"]}
	if ns, ok := subject["namespace"]; ok {
		out["namespace"] = ns
	}
	_, isString := out["result"].(string)
	return out, isString
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
