package admission

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// The fan-out of one request to the scripts sharing a webhook entry (group.go), and the one
// answer made of their decisions: what the API server would have made of as many entries,
// for one HTTPS call.

// decide runs the scripts for req, received then, by the one deadline the whole fan-out
// shares (Deadline): a script whose turn comes after it is not started and answers by its
// failure policy.
func (s *Server) decide(r *http.Request, received time.Time, kind string, scripts []Script, sreq scripting.AdmissionRequest) (Decision, []Decision) {
	ctx, cancel := context.WithDeadline(r.Context(), Deadline(received, r.URL.Query().Get("timeout"), scripts))
	defer cancel()
	if kind == "validate" {
		return ValidateAll(ctx, scripts, sreq)
	}
	return MutateAll(ctx, scripts, sreq)
}

// Deadline is when the scripts answering a request that arrived at received must have
// answered: the webhook's time counted from the arrival, less AnswerMargin of it. The
// webhook's time is the API server's timeout parameter when it sends one, else the scripts'
// timeoutSeconds (the same for scripts sharing an entry, the shortest otherwise; a script
// with none, such as one not loaded, does not count).
func Deadline(received time.Time, timeout string, scripts []Script) time.Time {
	seconds := 0
	for _, script := range scripts {
		if t := script.Spec().TimeoutSeconds; t > 0 && (seconds == 0 || t < seconds) {
			seconds = t
		}
	}
	budget := time.Duration(cmp.Or(seconds, scripting.DefaultAdmissionTimeoutSeconds)) * time.Second
	if t, err := time.ParseDuration(timeout); err == nil && t > 0 {
		budget = min(budget, t)
	}
	return received.Add(budget - AnswerMargin(budget))
}

// AnswerMargin is the part of a webhook's time kept for the answer to reach the API server
// after the scripts' deadline: a tenth, at most a second.
func AnswerMargin(budget time.Duration) time.Duration { return min(budget/10, time.Second) }

// ValidateAll asks every script's validate about req concurrently (each script runs on its
// own runtimes) and merges their decisions: denied when any denies (after its mode), with the
// HTTP code of the first denial in the order of scripts and a message naming each denying
// script; the warnings of all, in that order. each holds every script's own decision, in the
// order of scripts. One script's decision is returned as it is. ValidateAll returns once every
// call has returned; a panicking call answers by its script's failure policy.
func ValidateAll(ctx context.Context, scripts []Script, req scripting.AdmissionRequest) (merged Decision, each []Decision) {
	start := time.Now()
	each = make([]Decision, len(scripts))
	if len(scripts) == 1 {
		each[0] = Validate(ctx, scripts[0], req)
		return each[0], each
	}
	var wg sync.WaitGroup
	for i, s := range scripts[1:] {
		wg.Go(func() { each[i+1] = safeValidate(ctx, s, req) }) // owned here: joined below
	}
	each[0] = safeValidate(ctx, scripts[0], req)
	wg.Wait()
	merged = mergeValidations(scripts, each)
	merged.Took = time.Since(start)
	return merged, each
}

// safeValidate is Validate with a panic answered by the script's failure policy: on a
// goroutine of ValidateAll's, a panic would end the process.
func safeValidate(ctx context.Context, s Script, req scripting.AdmissionRequest) (d Decision) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			d = failed(s.Name(), "validate", s.Spec(), fmt.Errorf("panic: %v", p))
			d.Took = time.Since(start)
		}
	}()
	return Validate(ctx, s, req)
}

func mergeValidations(scripts []Script, each []Decision) Decision {
	merged := Decision{Allowed: true}
	var denials []string
	for i, d := range each {
		merged.Warnings = append(merged.Warnings, d.Warnings...)
		if d.Allowed {
			continue
		}
		if merged.Allowed {
			merged.Allowed, merged.Code = false, d.Code
		}
		denials = append(denials, namedMessage(scripts[i].Name(), d.Message))
	}
	merged.Message = strings.Join(denials, "; ")
	merged.Outcome = mergedOutcome(merged)
	return merged
}

// MutateAll asks the scripts' mutate about req in their order, each seeing the object as the
// previous ones left it, and answers with one patch: the diff of the request's object and the
// last one. A script's error or refused patch answers by its failure policy as Mutate does:
// under Ignore the others' changes still apply; a denial ends the chain (the scripts after it
// are not asked), as the API server stops at a denying webhook, with the warnings so far.
// each holds the decisions of the scripts asked, in order, each with the patch of its own
// change. One script's decision is returned as it is.
func MutateAll(ctx context.Context, scripts []Script, req scripting.AdmissionRequest) (merged Decision, each []Decision) {
	start := time.Now()
	if len(scripts) == 1 {
		d := Mutate(ctx, scripts[0], req)
		return d, []Decision{d}
	}
	orig := req.Object
	var warnings []string
	for _, s := range scripts {
		d, out := mutate(ctx, s, req)
		each = append(each, d)
		warnings = append(warnings, d.Warnings...)
		if !d.Allowed {
			d.Warnings, d.Message, d.Took = warnings, namedMessage(s.Name(), d.Message), time.Since(start)
			return d, each
		}
		if out != nil {
			req.Object = out
		}
	}
	merged = chainPatch(orig, req.Object)
	merged.Warnings, merged.Took = warnings, time.Since(start)
	merged.Outcome = mergedOutcome(merged)
	return merged, each
}

// chainPatch allows with the patch from the request's object to the chain's last one. Each
// step's patch passed checkProtected, so their sum does too; an encoding failure (which the
// steps would have met first) denies.
func chainPatch(orig, last scripting.Object) Decision {
	if orig == nil {
		return Decision{Allowed: true}
	}
	patch, err := jsonPatch(orig, last)
	if err != nil {
		msg := fmt.Sprintf("combine the scripts' patches: %v", err)
		return Decision{Outcome: OutcomeErrored, Err: err, Message: msg, Code: http.StatusInternalServerError}
	}
	return Decision{Allowed: true, Patch: patch}
}

// namedMessage prefixes a denial's message with its script's name unless it starts with it
// (a failure's or a default message).
func namedMessage(script, msg string) string {
	if strings.HasPrefix(msg, script+" ") {
		return msg
	}
	return script + ": " + msg
}

// mergedOutcome is the outcome of a merged decision: denied, warned or allowed. The scripts'
// own decisions keep theirs (audited, errored) for metrics and views.
func mergedOutcome(d Decision) string {
	switch {
	case !d.Allowed:
		return OutcomeDenied
	case len(d.Warnings) > 0:
		return OutcomeWarned
	}
	return OutcomeAllowed
}
