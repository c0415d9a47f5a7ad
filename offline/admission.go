package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// Admission offline: the harness plays kube-apiserver's webhook dispatcher for the admission
// scripts its engine serves. Each webhook call is an AdmissionReview v1 handed in process to
// admission.Server, the runner's own webhook handler, so a script decides exactly as it does
// behind the runner's HTTPS server; what the API server does with the answers (which webhooks
// match, their order, applying patches, the client's error) is here.

// AdmissionRequest is one request to admit, as the API server would send it to every webhook
// that matches it.
type AdmissionRequest struct {
	Operation   string // CREATE, UPDATE, DELETE or CONNECT
	Resource    schema.GroupVersionResource
	SubResource string
	Namespace   string
	Name        string
	Object      map[string]any            // nil on DELETE
	OldObject   map[string]any            // UPDATE and DELETE
	UserInfo    authenticationv1.UserInfo // the zero value is DefaultUser
	DryRun      bool
	// Script, when set, calls that script's webhooks only.
	Script string
}

// DefaultUser is who writes to the in-memory cluster, as admission scripts see it in
// ctx.userInfo: the harness's and the plugin's writes alike.
var DefaultUser = authenticationv1.UserInfo{Username: "runner-test", Groups: []string{"system:authenticated"}}

// AdmissionCall is one webhook called: the script, its kind ("mutate" or "validate") and the
// decision it made.
type AdmissionCall struct {
	Script, Webhook string
	Decision        admission.Decision
}

// AdmissionResult is what the API server makes of a request's webhook calls.
type AdmissionResult struct {
	// Calls are the scripts' decisions in the order made: the mutating webhooks', then the
	// validating ones'; within a webhook entry shared by several scripts, in its path's order.
	Calls    []AdmissionCall
	Warnings []string // every call's, as the client receives them
	// Patch is the JSON Patch of every mutating webhook, in order (one array), nil without change.
	Patch []byte
	// Object is the request's object as the mutating webhooks left it.
	Object map[string]any
	// Err is the error the client gets when a webhook denied (an *apierrors.StatusError as
	// kube-apiserver makes it) or could not be called; nil when the request is admitted.
	Err error
}

// admitter serves admission for the harness's engine; safe for concurrent use.
type admitter struct {
	e       *engine.Engine
	cluster *memcluster.Cluster // whose Namespaces' labels the namespaceSelectors match
	srv     *admission.Server
	uids    atomic.Uint64
	mu      sync.Mutex
	// observed are the decisions of each request in flight, by uid, handed over from the
	// server's Observe (one per script the webhook called, in the order of its path).
	observed map[types.UID][]AdmissionCall
	// onWrite is Config.OnAdmission, nil when unset.
	onWrite func(kind string, req AdmissionRequest, res AdmissionResult)
}

func newAdmitter(e *engine.Engine, cfg Config) *admitter {
	a := &admitter{e: e, cluster: cfg.Cluster, observed: map[types.UID][]AdmissionCall{}, onWrite: cfg.OnAdmission}
	logger := cfg.Logger
	if logger != nil {
		logger = logger.With("component", "admission")
	}
	a.srv = admission.NewServer(admission.Config{Logger: logger,
		Lookup:  func(name string) (admission.Script, bool) { return e.AdmissionScript(name) },
		Observe: a.observe})
	return a
}

func (a *admitter) observe(o admission.Observation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.observed[o.Request.UID] = append(a.observed[o.Request.UID], AdmissionCall{Script: o.Script, Webhook: o.Kind, Decision: o.Decision})
}

// takeObserved returns and forgets the decisions made for uid.
func (a *admitter) takeObserved(uid types.UID) []AdmissionCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	calls := a.observed[uid]
	delete(a.observed, uid)
	return calls
}

// Admit runs req through the matching mutating webhooks, then, unless one denied, the
// validating ones, as kube-apiserver does for a write. It fails only when req.Script names a
// script that serves no admission.
func (h *Harness) Admit(ctx context.Context, req AdmissionRequest) (AdmissionResult, error) {
	if req.Script != "" {
		if _, ok := h.e.AdmissionScript(req.Script); !ok {
			return AdmissionResult{}, fmt.Errorf("admit: %s is not loaded or has neither validate nor mutate", req.Script)
		}
	}
	if req.UserInfo.Username == "" && len(req.UserInfo.Groups) == 0 {
		req.UserInfo = DefaultUser
	}
	res := h.admit.mutate(ctx, req)
	if res.Err == nil {
		req.Object = res.Object
		h.admit.validate(ctx, req, &res)
	}
	return res, nil
}

// mutate calls the matching mutating webhooks in order, each on the object the previous
// one left, until one denies.
func (a *admitter) mutate(ctx context.Context, req AdmissionRequest) AdmissionResult {
	res := AdmissionResult{Object: req.Object}
	var ops []json.RawMessage
	for _, hook := range a.matching(req, "mutate") {
		req.Object = res.Object
		calls, resp, err := a.call(ctx, hook, req)
		if res.record(hook, calls, resp, err); res.Err != nil {
			return res
		}
		if resp == nil || len(resp.Patch) == 0 {
			continue
		}
		if res.Object, err = applyPatch(res.Object, resp.Patch); err != nil {
			res.Err = apierrors.NewInternalError(fmt.Errorf("apply the patch of webhook %q: %w", hook.group.Name(), err))
			return res
		}
		var more []json.RawMessage
		_ = json.Unmarshal(resp.Patch, &more) // applied above: a valid array
		ops = append(ops, more...)
	}
	if len(ops) > 0 {
		res.Patch, _ = json.Marshal(ops)
	}
	return res
}

// validate calls every matching validating webhook; the first denial in order is the
// client's error, while every call's warnings reach it.
func (a *admitter) validate(ctx context.Context, req AdmissionRequest, res *AdmissionResult) {
	for _, hook := range a.matching(req, "validate") {
		denied := res.Err
		calls, resp, err := a.call(ctx, hook, req)
		res.record(hook, calls, resp, err)
		if denied != nil {
			res.Err = denied
		}
	}
}

// record adds a webhook call's outcome: its scripts' decisions, its warnings, its denial, or
// the failure to call it.
func (res *AdmissionResult) record(hook webhook, calls []AdmissionCall, resp *admissionv1.AdmissionResponse, err error) {
	if err != nil {
		res.Err = err
		return
	}
	res.Calls = append(res.Calls, calls...)
	if resp == nil {
		return
	}
	res.Warnings = append(res.Warnings, resp.Warnings...)
	if !resp.Allowed {
		res.Err = deniedError(hook.group.Name(), resp.Result)
	}
}

// call sends one AdmissionReview to a webhook entry through the runner's handler, which fans
// it out to the entry's scripts; calls are their decisions. A webhook that cannot answer
// (its scripts unloaded meanwhile) is skipped under failurePolicy Ignore (nil response) and
// fails the request under Fail, as the API server does with a webhook it cannot call.
func (a *admitter) call(ctx context.Context, hook webhook, req AdmissionRequest) ([]AdmissionCall, *admissionv1.AdmissionResponse, error) {
	review, uid, err := a.review(req)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	spec := hook.group.Entry.Spec
	path := hook.group.Path() + "?timeout=" + strconv.Itoa(spec.TimeoutSeconds) + "s"
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(review))
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	r.Header.Set("Content-Type", "application/json")
	w := &recorder{header: http.Header{}, code: http.StatusOK}
	a.srv.ServeHTTP(w, r)
	var out admissionv1.AdmissionReview
	if w.code == http.StatusOK {
		err = json.Unmarshal(w.body.Bytes(), &out)
	}
	calls := a.takeObserved(uid)
	if w.code != http.StatusOK || err != nil || out.Response == nil {
		if spec.FailurePolicy == "Ignore" {
			return nil, nil, nil
		}
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: %d %s",
			hook.group.Name(), w.code, bytes.TrimSpace(w.body.Bytes())))
	}
	return calls, out.Response, nil
}

// review encodes req as an AdmissionReview with a fresh uid.
func (a *admitter) review(req AdmissionRequest) ([]byte, types.UID, error) {
	uid := types.UID("offline-" + strconv.FormatUint(a.uids.Add(1), 10))
	obj := req.Object
	if obj == nil {
		obj = req.OldObject
	}
	gvk := (&unstructured.Unstructured{Object: obj}).GroupVersionKind()
	dryRun := req.DryRun
	ar := &admissionv1.AdmissionRequest{UID: uid, Kind: metav1.GroupVersionKind(gvk), Resource: metav1.GroupVersionResource(req.Resource),
		SubResource: req.SubResource, RequestKind: ptr(metav1.GroupVersionKind(gvk)), RequestResource: ptr(metav1.GroupVersionResource(req.Resource)),
		RequestSubResource: req.SubResource, Name: req.Name, Namespace: req.Namespace, Operation: admissionv1.Operation(req.Operation),
		UserInfo: req.UserInfo, DryRun: &dryRun}
	var err error
	if ar.Object, err = raw(req.Object); err == nil {
		ar.OldObject, err = raw(req.OldObject)
	}
	if err != nil {
		return nil, uid, err
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: ar})
	return body, uid, err
}

// recorder is the http.ResponseWriter of an in-process call: status and body.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

func ptr[T any](v T) *T { return &v }

func raw(obj map[string]any) (runtime.RawExtension, error) {
	if obj == nil {
		return runtime.RawExtension{}, nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return runtime.RawExtension{}, fmt.Errorf("encode the request's object: %w", err)
	}
	return runtime.RawExtension{Raw: b}, nil
}

// applyPatch applies a webhook's JSON Patch to obj, as the API server does.
func applyPatch(obj map[string]any, patch []byte) (map[string]any, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if doc, err = p.Apply(doc); err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	return out.Object, nil
}

// AdmissionServer is the webhook handler every admission call of the harness goes through;
// a test may also serve it to a real API server, to compare the two.
func (h *Harness) AdmissionServer() *admission.Server { return h.admit.srv }

// deniedError is the error kube-apiserver returns for a webhook's denial, worded as its
// webhook errors' ToStatusErr words it (k8s.io/apiserver, not imported: its dependencies would
// grow the runner's binary and resident memory, docs/benchmarks.md).
func deniedError(webhook string, result *metav1.Status) *apierrors.StatusError {
	deniedBy := fmt.Sprintf("admission webhook %q denied the request", webhook)
	status := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		status = *result
	}
	status.Code = max(status.Code, http.StatusBadRequest)
	if status.Status == "" || status.Status == metav1.StatusSuccess {
		status.Status = metav1.StatusFailure
	}
	switch {
	case status.Message != "":
		status.Message = deniedBy + ": " + status.Message
	case status.Reason != "":
		status.Message = deniedBy + ": " + string(status.Reason)
	default:
		status.Message = deniedBy + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: status}
}
