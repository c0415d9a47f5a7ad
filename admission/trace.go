package admission

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// The trace record of a decision: what runner explain, tail and the web page show of it
// (package inspection's AdmissionDecision).

// ObjectKey is the key the views name req's object by: namespace/name, or name when
// cluster-scoped. A CREATE with generateName may reach a webhook before its name is
// generated: its key is then the generateName prefix followed by "*".
func ObjectKey(req scripting.AdmissionRequest) string {
	name := req.Name
	if name == "" {
		meta, _ := req.Object["metadata"].(map[string]any)
		if n, _ := meta["name"].(string); n != "" {
			name = n
		} else if g, _ := meta["generateName"].(string); g != "" {
			name = g + "*"
		}
	}
	if req.Namespace == "" {
		return name
	}
	return req.Namespace + "/" + name
}

// TraceRecord is o as a trace record (Event "admission", Handler the webhook kind, Result
// the outcome); the recorder fills in the script's version. Its error, message, warnings,
// patch, user and object are cut to inspection.AdmissionPatchChars each: the user and the
// object's name come from the caller's body, which no check bounds below the body's limit.
func (o Observation) TraceRecord() inspection.TraceRecord {
	d, req := o.Decision, o.Request
	rec := inspection.TraceRecord{Time: o.Received, Script: o.Script, Event: "admission", Handler: o.Kind,
		Resource: dynamicinformer.FormatGVR(schema.GroupVersionResource(req.Resource)), Object: cut(o.Object),
		DurationMs: float64(d.Took.Microseconds()) / 1000, Result: d.Outcome,
		Admission: &inspection.AdmissionDecision{Webhook: o.Kind, Operation: string(req.Operation), Subresource: req.SubResource,
			User: cut(req.UserInfo.Username), DryRun: req.DryRun != nil && *req.DryRun, Allowed: d.Allowed, Code: d.Code,
			Message: cut(d.Message), Patch: cut(string(d.Patch))}}
	if d.Err != nil {
		rec.Error = cut(d.Err.Error())
	}
	for _, w := range d.Warnings {
		rec.Admission.Warnings = append(rec.Admission.Warnings, cut(w))
	}
	return rec
}

// cut bounds s to inspection.AdmissionPatchChars bytes, on a rune boundary.
func cut(s string) string {
	if len(s) <= inspection.AdmissionPatchChars {
		return s
	}
	return strings.ToValidUTF8(s[:inspection.AdmissionPatchChars], "") + "…"
}
