package scripting

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
)

// k8s.addFinalizer and k8s.removeFinalizer: conflict-safe edits of metadata.finalizers. Each
// reads the object and sends a JSON patch that first tests the resourceVersion it read, so a
// change made meanwhile fails the patch instead of being overwritten; it then reads again and
// retries, up to finalizerAttempts times, after a jittered, doubling pause. Only that failure
// is retried: a 409 Conflict, or the 422 kube-apiserver answers when a JSON patch does not
// apply (its failed resourceVersion test; any other operation of ours applies to the object
// as read). A 422 that rejects the result (a validation error: an invalid finalizer name)
// is thrown at once: another try cannot mend it.

const finalizerAttempts = 5

// finalizerBackoff is the pause before the first retry; it doubles, with up to 100% jitter.
var finalizerBackoff = 10 * time.Millisecond

// testFailed is how evanphx/json-patch words a failed test of the resourceVersion; a server
// that passes the patch library's message on says it.
const testFailed = "testing value /metadata/resourceVersion failed"

// addFinalizer is k8s.addFinalizer(resource, namespace, name, finalizer): the object, with
// the finalizer added unless it was there.
func (k *k8sModule) addFinalizer(call goja.FunctionCall) goja.Value {
	const fn = "k8s.addFinalizer"
	defer k.guard(fn)
	k.sideEffect(fn)
	return k.editFinalizers(fn, call, func(finalizers []any, f string) []map[string]any {
		if slices.Contains(finalizers, any(f)) {
			return nil
		}
		if finalizers == nil {
			return []map[string]any{{"op": "add", "path": "/metadata/finalizers", "value": []string{f}}}
		}
		return []map[string]any{{"op": "add", "path": "/metadata/finalizers/-", "value": f}}
	})
}

// removeFinalizer is k8s.removeFinalizer(resource, namespace, name, finalizer): the object,
// with the finalizer removed if it was there. A missing object is no error: it is gone.
func (k *k8sModule) removeFinalizer(call goja.FunctionCall) goja.Value {
	const fn = "k8s.removeFinalizer"
	defer k.guard(fn)
	k.sideEffect(fn)
	return k.editFinalizers(fn, call, func(finalizers []any, f string) []map[string]any {
		i := slices.Index(finalizers, any(f))
		if i < 0 {
			return nil
		}
		return []map[string]any{{"op": "remove", "path": "/metadata/finalizers/" + strconv.Itoa(i)}}
	})
}

// editFinalizers reads the object, asks edit for the operations (none: nothing to do) and
// patches with a resourceVersion test, retrying on a conflicting change.
func (k *k8sModule) editFinalizers(fn string, call goja.FunctionCall, edit func([]any, string) []map[string]any) goja.Value {
	res := k.resourceArg(fn, call)
	ns, name := k.stringArg(fn, call, 1, "namespace"), k.nameArg(fn, call, 2)
	f := k.stringArg(fn, call, 3, "finalizer")
	if f == "" {
		panic(k.rt.NewTypeError(fn + ": finalizer is required, e.g. \"example.com/cleanup\""))
	}
	c := k.clientFor(fn)
	for attempt := 1; ; attempt++ {
		obj, err := c.Get(k.ctx(), res, ns, name)
		if apierrors.IsNotFound(err) && fn == "k8s.removeFinalizer" {
			return goja.Null()
		}
		if err != nil {
			k.throwK8s("get", res, joinKey(ns, name), err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		current, _ := meta["finalizers"].([]any)
		ops := edit(current, f)
		if ops == nil {
			return k.view(obj)
		}
		test := map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]}
		patch, _ := json.Marshal(append([]map[string]any{test}, ops...))
		out, err := c.Patch(k.ctx(), res, ns, name, patch, PatchOptions{Type: "json"})
		if err == nil {
			return k.view(out)
		}
		if !changedMeanwhile(err) || attempt == finalizerAttempts {
			k.throwK8s("patch finalizers of", res, joinKey(ns, name), err)
		}
		k.pause(wait.Jitter(finalizerBackoff<<(attempt-1), 1), "patch finalizers of", res, joinKey(ns, name))
	}
}

// changedMeanwhile reports whether a finalizer patch failed because the object changed since
// it was read: a conflict, or the patch not applying. kube-apiserver (and memcluster) answer
// the latter with a 422 that carries no causes (NewGenericServerResponse drops the patch
// library's message); a validation error's 422 lists its field errors as causes.
func changedMeanwhile(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return false
	}
	st := status.Status()
	if st.Details == nil || len(st.Details.Causes) == 0 || strings.Contains(st.Message, testFailed) {
		return true
	}
	for _, c := range st.Details.Causes {
		if strings.Contains(c.Message, testFailed) {
			return true
		}
	}
	return false
}

// pause waits d, throwing if the call's context ends first (its deadline: the handler
// timeout).
func (k *k8sModule) pause(d time.Duration, verb, res, target string) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-k.ctx().Done():
		k.throwK8s(verb, res, target, k.ctx().Err())
	}
}
