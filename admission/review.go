package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/util/json"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/scripting"
)

// Reading an AdmissionReview v1 request and writing its response.

// badRequest is a request refused before any script sees it, with its HTTP status.
type badRequest struct {
	code int
	msg  string
}

func (b *badRequest) Error() string { return b.msg }

func refuse(code int, format string, args ...any) *badRequest {
	return &badRequest{code: code, msg: fmt.Sprintf(format, args...)}
}

// readReview reads and checks r's body: a JSON AdmissionReview admission.k8s.io/v1 with a
// request, within limit bytes and what budget allows (readBody). release gives back what the
// body took of budget: call it once the request is answered (its decoded copies live as long).
func readReview(r *http.Request, limit int64, budget *bodyBudget) (_ *admissionv1.AdmissionRequest, release func(), _ error) {
	release = func() {}
	if r.Method != http.MethodPost {
		return nil, release, refuse(http.StatusMethodNotAllowed, "admission reviews are POSTed, not sent with %s", r.Method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return nil, release, refuse(http.StatusUnsupportedMediaType, "content type %q is not application/json", ct)
	}
	body, release, err := readBody(r, limit, budget)
	if err != nil {
		return nil, release, err
	}
	req, err := decodeReview(body)
	return req, release, err
}

// decodeReview decodes and checks a request body.
func decodeReview(body []byte) (*admissionv1.AdmissionRequest, error) {
	// One pass over the body: the review's kind and version are checked once it is decoded
	// (v1beta1's shape decodes alike, and is then refused by its apiVersion).
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&review); err != nil {
		return nil, refuse(http.StatusBadRequest, "not an AdmissionReview: %v", err)
	}
	if review.Kind != "AdmissionReview" {
		return nil, refuse(http.StatusBadRequest, "not an AdmissionReview: kind %q", review.Kind)
	}
	if review.APIVersion != admissionv1.SchemeGroupVersion.String() {
		return nil, refuse(http.StatusBadRequest, "AdmissionReview %s is not served; register the webhook with admissionReviewVersions [v1]", review.APIVersion)
	}
	if review.Request == nil || review.Request.UID == "" {
		return nil, refuse(http.StatusBadRequest, "the AdmissionReview has no request (or no request uid)")
	}
	return review.Request, nil
}

// scriptRequest is what a script sees of req.
func scriptRequest(req *admissionv1.AdmissionRequest) (scripting.AdmissionRequest, error) {
	out := scripting.AdmissionRequest{
		Operation: string(req.Operation), SubResource: req.SubResource, Namespace: req.Namespace, Name: req.Name,
		Resource: dynamicinformer.FormatGVR(schema.GroupVersionResource(req.Resource)), UserInfo: userInfo(req.UserInfo),
		DryRun: req.DryRun != nil && *req.DryRun,
	}
	var err error
	if out.Object, err = decodeObject(req.Object, "object"); err != nil {
		return out, err
	}
	out.OldObject, err = decodeObject(req.OldObject, "oldObject")
	return out, err
}

// decodeObject decodes raw as client-go's unstructured objects are: int64 and float64
// numbers. Empty or null is nil.
func decodeObject(raw runtime.RawExtension, field string) (scripting.Object, error) {
	if len(raw.Raw) == 0 || bytes.Equal(raw.Raw, []byte("null")) {
		return nil, nil
	}
	var obj map[string]any
	if err := kjson.Unmarshal(raw.Raw, &obj); err != nil {
		return nil, refuse(http.StatusBadRequest, "decode the request's %s: %v", field, err)
	}
	return obj, nil
}

func userInfo(u authenticationv1.UserInfo) scripting.Object {
	groups := make([]any, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = g
	}
	extra := make(map[string]any, len(u.Extra))
	for k, vals := range u.Extra {
		list := make([]any, len(vals))
		for i, v := range vals {
			list[i] = v
		}
		extra[k] = list
	}
	return scripting.Object{"username": u.Username, "uid": u.UID, "groups": groups, "extra": extra}
}

// response is the AdmissionReview v1 answering req with d.
func response(req *admissionv1.AdmissionRequest, d Decision) admissionv1.AdmissionReview {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: d.Allowed, Warnings: d.Warnings}
	if !d.Allowed {
		resp.Result = &metav1Status{Code: d.Code, Message: d.Message, Reason: reasonFor(d.Code)}
	}
	if d.Patch != nil {
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = d.Patch, &pt
	}
	return admissionv1.AdmissionReview{TypeMeta: reviewType, Response: resp}
}

// writeJSON writes v with status 200; an error writing is the client's problem.
func writeJSON(w http.ResponseWriter, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode the AdmissionReview response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b))) // whole in one write, not chunked
	if _, err := w.Write(b); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		return fmt.Errorf("write the AdmissionReview response: %w", err)
	}
	return nil
}
