package scripting

import "errors"

// ErrSideEffect is wrapped by the error a binding with side effects (a k8s write, an Event, a
// network request) throws during a call that must have none: validate and mutate, whose
// webhooks are registered with sideEffects: None, so the API server may call them for dry
// runs and retries.
var ErrSideEffect = errors.New("side effects are not allowed here")

// The one mechanism refusing side effects during a call. A call that must have none sets
// callEnv.pure to its own name for its duration (the instance's admit, admit.go; end clears
// it with the rest of the call's state). Every binding that changes something outside the
// runtime calls sideEffect(fn) first, before reading its arguments: the k8s writes
// (create, update, updateStatus, patch, patchStatus, delete, event, addFinalizer,
// removeFinalizer) do, and so must any new binding with side effects (fetch, for one).
// Reads (k8s.get, k8s.list, ctx.cache), logging and util are not side effects.

// sideEffect throws a JS Error wrapping ErrSideEffect when the running call must have no
// side effects; fn names the binding for the message.
func (e *callEnv) sideEffect(fn string) {
	if e.pure == "" {
		return
	}
	if fn == "fetch" {
		e.throwf("fetch in %s: %w: admission allows no network calls (the API server waits on the webhook "+
			"and may call it again for dry runs and retries); fetch in a handler or reconcile and keep what %s needs "+
			"in the cache (a ConfigMap or custom resource the script watches)", e.pure, ErrSideEffect, e.pure)
	}
	e.throwf("%s in %s: %w: admission calls must not change anything "+
		"(their webhooks are registered with sideEffects: None); do it in a handler or reconcile instead", fn, e.pure, ErrSideEffect)
}
