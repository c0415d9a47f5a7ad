package check

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/offline"
)

// recorder keeps the webhooks' answers to check's own create (offline.Config.OnAdmission),
// between start and stop. Other writes (the scripts' handlers', dry-run) are not check's: they
// happen while the engine settles, never during the create, which holds the cluster's write
// order; the CREATE and resource filter keeps them out all the same.
type recorder struct {
	mu     sync.Mutex
	on     bool
	gvr    schema.GroupVersionResource
	calls  []offline.AdmissionCall
	denial error
}

func (r *recorder) start(gvr schema.GroupVersionResource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on, r.gvr, r.calls, r.denial = true, gvr, nil, nil
}

// stop returns the calls made since start, and the error the client got from them (nil
// when the webhooks admitted the object).
func (r *recorder) stop() ([]offline.AdmissionCall, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.calls, r.denial
}

func (r *recorder) observe(_ string, req offline.AdmissionRequest, res offline.AdmissionResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on || req.Operation != "CREATE" || req.Resource != r.gvr {
		return
	}
	r.calls = append(r.calls, res.Calls...)
	if res.Err != nil {
		r.denial = res.Err
	}
}

// resultOf is a webhook call's Result.
func resultOf(c offline.AdmissionCall) Result {
	d := c.Decision
	r := Result{Script: c.Script, Webhook: c.Webhook, Message: d.Message, Warnings: d.Warnings, Patch: d.Patch}
	switch {
	case d.Outcome == admission.OutcomeErrored:
		r.Result, r.Warnings = Error, nil // the warning repeats the message
	case !d.Allowed:
		r.Result, r.Code = Deny, d.Code
	case d.Outcome == admission.OutcomeAudited:
		r.Result = Audit
	case len(d.Warnings) > 0:
		r.Result = Warn
	case len(d.Patch) > 0:
		r.Result = Mutate
	default:
		r.Result = Pass
	}
	return r
}
