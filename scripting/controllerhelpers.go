package scripting

import (
	"encoding/json"

	"github.com/dop251/goja"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// util.ownerReference and util.setStatusCondition: the controller helpers every operator
// writes again, with apimachinery's semantics.

var ownerRefKeys = []string{"controller", "blockOwnerDeletion"}

// ownerReference is util.ownerReference(owner, {controller, blockOwnerDeletion}): the
// ownerReferences entry naming owner; both options default to true, as controller-runtime's
// SetControllerReference sets them.
func (u *utilModule) ownerReference(call goja.FunctionCall) goja.Value {
	const fn = "util.ownerReference"
	defer u.guard(fn)
	owner, ok := u.exportValue(fn, call.Argument(0)).(map[string]any)
	if !ok {
		panic(u.rt.NewTypeError(fn + ": owner must be an object"))
	}
	opts := u.options(fn, call.Argument(1), ownerRefKeys...)
	ref := map[string]any{"controller": true, "blockOwnerDeletion": true}
	for _, k := range ownerRefKeys {
		if v, ok := opts[k]; ok {
			ref[k] = v.ToBoolean()
		}
	}
	meta, _ := owner["metadata"].(map[string]any)
	for _, f := range []struct {
		from map[string]any
		key  string
	}{{owner, "apiVersion"}, {owner, "kind"}, {meta, "name"}, {meta, "uid"}} {
		v, _ := f.from[f.key].(string)
		if v == "" {
			panic(u.rt.NewTypeError(fn + ": the owner has no " + f.key + "; pass an object as the API server returned it"))
		}
		ref[f.key] = v
	}
	return u.plain(ref)
}

// setStatusCondition is util.setStatusCondition(conditions, condition): a new conditions
// list with condition set as apimachinery's meta.SetStatusCondition sets it: added if its type
// is new; otherwise updated, lastTransitionTime moving only when status changes. The list
// given is not changed (it may be a read-only view). A new lastTransitionTime is the script's
// clock's (Options.Now: virtual under runner test), as Date's is.
func (u *utilModule) setStatusCondition(call goja.FunctionCall) goja.Value {
	const fn = "util.setStatusCondition"
	defer u.guard(fn)
	var conditions []metav1.Condition
	if list := call.Argument(0); !isMissing(list) {
		u.decodeInto(fn, "conditions", u.exportValue(fn, list), &conditions)
	}
	var cond metav1.Condition
	u.decodeInto(fn, "condition", u.exportValue(fn, call.Argument(1)), &cond)
	if cond.Type == "" || cond.Status == "" {
		panic(u.rt.NewTypeError(fn + ": condition needs type and status (\"True\", \"False\" or \"Unknown\")"))
	}
	if cond.LastTransitionTime.IsZero() {
		cond.LastTransitionTime = metav1.NewTime(u.now())
	}
	apimeta.SetStatusCondition(&conditions, cond)
	var out []any
	u.decodeInto(fn, "result", conditions, &out)
	return u.plain(out)
}

// decodeInto converts v to into through JSON, as the API server would read it.
func (u *utilModule) decodeInto(fn, what string, v, into any) {
	data, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(data, into)
	}
	if err != nil {
		panic(u.rt.NewTypeError(fn + ": " + what + " is not valid: " + err.Error()))
	}
}
