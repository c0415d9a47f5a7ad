package admission

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// Outcomes of a decision, as metrics and views name them.
const (
	OutcomeAllowed = "allowed" // allowed, possibly with a patch
	OutcomeDenied  = "denied"
	OutcomeWarned  = "warned"  // allowed with warnings: the script's, or a denial in warn mode
	OutcomeAudited = "audited" // a denial (or a patch) in audit mode: allowed, only recorded
	OutcomeErrored = "errored" // the script threw, timed out or was stopped: the failure policy answered
)

// Script is one script's admission functions as a loaded version serves them. Validate and
// Mutate may be called from any goroutine, concurrently; they return within the context's
// deadline or the script's own, whichever comes first.
type Script interface {
	Name() string
	// Defines reports whether the script has the function kind ("validate", "mutate") names.
	Defines(kind string) bool
	Spec() scripting.AdmissionSpec
	Validate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Validation, error)
	Mutate(ctx context.Context, req scripting.AdmissionRequest) (scripting.Object, error)
}

// Decision is the answer to one admission request and what explains it.
type Decision struct {
	Allowed  bool
	Code     int32  // the HTTP status of a denial
	Message  string // the denial's message; for an audited or warned denial, the one it would have had
	Warnings []string
	Patch    []byte // a JSON Patch (RFC 6902), nil without change
	Outcome  string
	Err      error // the script's error, when it errored
	Took     time.Duration
}

// Validate asks s's validate about req and applies its mode and failure policy. Once ctx has
// ended, s is not asked: its failure policy answers.
func Validate(ctx context.Context, s Script, req scripting.AdmissionRequest) Decision {
	start := time.Now()
	var res scripting.Validation
	err := notStarted(ctx)
	if err == nil {
		res, err = s.Validate(ctx, req)
	}
	d := validation(s.Name(), s.Spec(), res, err)
	d.Took = time.Since(start)
	return d
}

func validation(name string, spec scripting.AdmissionSpec, res scripting.Validation, err error) Decision {
	if err != nil {
		return failed(name, "validate", spec, err)
	}
	if res.Allowed {
		return allowed(res.Warnings, nil)
	}
	d := Decision{Message: res.Message, Code: int32(cmp.Or(res.Code, http.StatusForbidden))}
	switch spec.Mode {
	case scripting.ModeWarn:
		d.Allowed, d.Outcome = true, OutcomeWarned
		d.Warnings = append(slices.Clone(res.Warnings), fmt.Sprintf("%s would deny this request: %s", name, cmp.Or(res.Message, "denied")))
	case scripting.ModeAudit:
		d.Allowed, d.Outcome = true, OutcomeAudited
	default:
		d.Outcome, d.Warnings = OutcomeDenied, res.Warnings
		d.Message = cmp.Or(d.Message, name+" denied the request")
	}
	return d
}

// Mutate asks s's mutate about req and turns the object it returns into a JSON Patch, within
// its mode and failure policy; once ctx has ended, as Validate, its failure policy answers. The patch holds only what the script changed: a value it
// returned that JavaScript cannot tell from the request's (an integer above 2^53 rounded, a
// "__proto__" key a copy dropped) is the request's (keepUntouched).
func Mutate(ctx context.Context, s Script, req scripting.AdmissionRequest) Decision {
	d, _ := mutate(ctx, s, req)
	return d
}

// mutate is Mutate, also returning the object mutate returned when the decision applies its
// patch (nil otherwise): what the next script of a chain sees (MutateAll).
func mutate(ctx context.Context, s Script, req scripting.AdmissionRequest) (Decision, scripting.Object) {
	start := time.Now()
	var out scripting.Object
	err := notStarted(ctx)
	if err == nil {
		out, err = s.Mutate(ctx, req)
	}
	var patch []byte
	if err == nil && out != nil {
		if req.Object == nil {
			err = fmt.Errorf("mutate returned an object for a %s request, which has none to change", req.Operation)
		} else {
			out = keepUntouched(req.Object, out).(scripting.Object)
			patch, err = jsonPatch(req.Object, out)
		}
	}
	d := mutation(s.Name(), s.Spec(), patch, err)
	d.Took = time.Since(start)
	if d.Patch == nil {
		out = nil
	}
	return d, out
}

func mutation(name string, spec scripting.AdmissionSpec, patch []byte, err error) Decision {
	if err != nil {
		return failed(name, "mutate", spec, err)
	}
	if patch == nil {
		return allowed(nil, nil)
	}
	switch spec.Mode {
	case scripting.ModeWarn:
		return Decision{Allowed: true, Outcome: OutcomeWarned, Patch: nil,
			Warnings: []string{name + " would change this object (mode warn): " + string(patch)}}
	case scripting.ModeAudit:
		return Decision{Allowed: true, Outcome: OutcomeAudited, Message: "would patch: " + string(patch)}
	}
	return allowed(nil, patch)
}

// notStarted is the error of a call not started because ctx has ended (the request's
// deadline passed while the scripts before it ran), nil while it has not.
func notStarted(ctx context.Context) error {
	err := context.Cause(ctx)
	if deadline, ok := ctx.Deadline(); err == nil && ok && !time.Now().Before(deadline) {
		err = context.DeadlineExceeded // its timer has not fired yet
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("not started: the request's time ran out before its turn: %w", err)
}

func allowed(warnings []string, patch []byte) Decision {
	outcome := OutcomeAllowed
	if len(warnings) > 0 {
		outcome = OutcomeWarned
	}
	return Decision{Allowed: true, Warnings: warnings, Patch: patch, Outcome: outcome}
}

// failed answers for a script that threw, timed out, was stopped or returned something it
// may not: Fail denies with the error (its file:line), Ignore allows with a warning.
func failed(name, fn string, spec scripting.AdmissionSpec, err error) Decision {
	msg := fmt.Sprintf("%s %s failed: %s", name, fn, errorText(err))
	if spec.FailurePolicy == scripting.FailurePolicyIgnore {
		return Decision{Allowed: true, Outcome: OutcomeErrored, Err: err, Message: msg,
			Warnings: []string{msg + " (failurePolicy Ignore: allowed)"}}
	}
	return Decision{Outcome: OutcomeErrored, Err: err, Message: msg, Code: http.StatusInternalServerError}
}

// errorText is err's message; a ScriptError's already names its file:line.
func errorText(err error) string {
	var se *scripting.ScriptError
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}
