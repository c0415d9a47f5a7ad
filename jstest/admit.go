package jstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/dop251/goja"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/offline"
)

// h.admit: one admission request through the admission scripts the harness loaded, as the
// API server would send it to their webhooks (offline.Harness.Admit), without writing.

// admitRequest is h.admit's argument.
type admitRequest struct {
	Operation   string         `json:"operation"`
	Object      map[string]any `json:"object"`
	OldObject   map[string]any `json:"oldObject"`
	UserInfo    *admitUser     `json:"userInfo"`
	DryRun      bool           `json:"dryRun"`
	SubResource string         `json:"subresource"`
	Script      string         `json:"script"`
}

type admitUser struct {
	Username string              `json:"username"`
	UID      string              `json:"uid"`
	Groups   []string            `json:"groups"`
	Extra    map[string][]string `json:"extra"`
}

// admitKeys are the properties h.admit accepts; jsinformer-test.d.ts declares the same.
var admitKeys = []string{"operation", "object", "oldObject", "userInfo", "dryRun", "subresource", "script"}

var admitOperations = []string{"CREATE", "UPDATE", "DELETE", "CONNECT"}

func (h *harness) admit(v goja.Value) goja.Value {
	req, err := h.admitRequest(v)
	if err != nil {
		h.f.throw(fmt.Errorf("h.admit: %w", err))
	}
	res, err := h.off.Admit(h.f.ctx, req)
	h.check(err)
	return h.f.toJS(admitAnswer(res))
}

// admitRequest reads h.admit's argument into the API server's request: the resource, the
// namespace and the name come from the object (oldObject on DELETE); an UPDATE or DELETE
// without oldObject takes the object the cluster holds.
func (h *harness) admitRequest(v goja.Value) (offline.AdmissionRequest, error) {
	var in admitRequest
	data, err := h.f.toGo(v)
	if err == nil {
		err = decodeStrict(data, &in, admitKeys...)
	}
	if err != nil {
		return offline.AdmissionRequest{}, err
	}
	if !slices.Contains(admitOperations, in.Operation) {
		return offline.AdmissionRequest{}, fmt.Errorf("operation must be CREATE, UPDATE, DELETE or CONNECT, got %q", in.Operation)
	}
	subject := in.Object
	if in.Operation == "DELETE" {
		in.Object, subject = nil, in.OldObject
	}
	if subject == nil {
		return offline.AdmissionRequest{}, errors.New("an object is required (oldObject for DELETE)")
	}
	u := &unstructured.Unstructured{Object: subject}
	res, err := h.cluster.ResourceFor(u.GetAPIVersion(), u.GetKind())
	if err != nil {
		return offline.AdmissionRequest{}, err
	}
	ns := u.GetNamespace()
	switch {
	case !res.Namespaced:
		ns = ""
	case ns == "":
		ns = "default"
	}
	req := offline.AdmissionRequest{Operation: in.Operation, Resource: res.GVR, SubResource: in.SubResource, Namespace: ns,
		Name: u.GetName(), Object: in.Object, OldObject: in.OldObject, DryRun: in.DryRun, UserInfo: in.UserInfo.info()}
	if in.Script != "" {
		req.Script = filepath.ToSlash(filepath.Clean(in.Script))
	}
	if req.OldObject == nil && (in.Operation == "UPDATE" || in.Operation == "DELETE") {
		stored, err := h.cluster.Get(res.GVR, ns, u.GetName())
		if err != nil {
			return req, fmt.Errorf("%s without oldObject takes the stored object: %w", in.Operation, err)
		}
		req.OldObject = stored.Object
	}
	return req, nil
}

func (u *admitUser) info() authenticationv1.UserInfo {
	if u == nil {
		return offline.DefaultUser
	}
	out := authenticationv1.UserInfo{Username: u.Username, UID: u.UID, Groups: u.Groups}
	for k, v := range u.Extra {
		if out.Extra == nil {
			out.Extra = map[string]authenticationv1.ExtraValue{}
		}
		out.Extra[k] = v
	}
	return out
}

// admitAnswer is h.admit's result: the decision as the client sees it, the object as the
// mutations left it, and each webhook's own decision.
func admitAnswer(res offline.AdmissionResult) map[string]any {
	out := map[string]any{"allowed": res.Err == nil, "code": 200, "message": "", "outcome": admission.OutcomeAllowed,
		"warnings": orEmpty(res.Warnings), "patch": patchValue(res.Patch), "object": res.Object}
	decisions := make([]any, 0, len(res.Calls))
	for _, c := range res.Calls {
		decisions = append(decisions, decisionValue(c))
	}
	out["decisions"] = decisions
	deciding := decidingCall(res.Calls)
	if deciding >= 0 {
		d := res.Calls[deciding].Decision
		out["message"], out["outcome"] = d.Message, d.Outcome
		if !d.Allowed {
			out["code"] = d.Code
		}
	}
	var st apierrors.APIStatus
	if res.Err != nil && (deciding < 0 || res.Calls[deciding].Decision.Allowed) && errors.As(res.Err, &st) {
		// Not a script's denial: a webhook the API server could not call.
		out["code"], out["message"], out["outcome"] = st.Status().Code, st.Status().Message, admission.OutcomeErrored
	}
	return out
}

// decidingCall is the call whose message and outcome h.admit's answer shows: the first
// denial, which is the client's error, else the first call that did more than allow (a
// warning, an audit, an error its failure policy allowed); -1 when every call simply allowed.
func decidingCall(calls []offline.AdmissionCall) int {
	if i := slices.IndexFunc(calls, func(c offline.AdmissionCall) bool { return !c.Decision.Allowed }); i >= 0 {
		return i
	}
	return slices.IndexFunc(calls, func(c offline.AdmissionCall) bool { return c.Decision.Outcome != admission.OutcomeAllowed })
}

func decisionValue(c offline.AdmissionCall) map[string]any {
	d := c.Decision
	code := int32(200)
	if !d.Allowed {
		code = d.Code
	}
	return map[string]any{"script": c.Script, "webhook": c.Webhook, "allowed": d.Allowed, "code": code,
		"message": d.Message, "warnings": orEmpty(d.Warnings), "patch": patchValue(d.Patch), "outcome": d.Outcome}
}

// patchValue is a JSON Patch as its operations, or nil.
func patchValue(patch []byte) any {
	if len(patch) == 0 {
		return nil
	}
	var ops []any
	if err := json.Unmarshal(patch, &ops); err != nil {
		return string(patch)
	}
	return ops
}

func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
