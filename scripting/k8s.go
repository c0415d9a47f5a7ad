package scripting

import (
	"context"
	"errors"
	"fmt"

	"github.com/dop251/goja"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The k8s global: synchronous server calls through Options.Client. Results are read-only
// views; failures throw an Error carrying `code` and `reason` when the server said why.

// k8sModule is the k8s global. ctx gives the current call's context, cancelled at its
// deadline; client is Options.Client, nil when there is none. Used only on the executor
// goroutine (env.go).
type k8sModule struct {
	*callEnv
	client Client
	ctx    func() context.Context
}

func newK8s(env *callEnv, client Client, ctx func() context.Context) *k8sModule {
	return &k8sModule{callEnv: env, client: client, ctx: ctx}
}

// exports is the k8s object.
func (k *k8sModule) exports() (*goja.Object, error) {
	obj := k.rt.NewObject()
	for name, fn := range map[string]func(goja.FunctionCall) goja.Value{
		"get": k.get, "list": k.list, "create": k.create, "update": k.update,
		"updateStatus": k.updateStatus, "patch": k.patch, "patchStatus": k.patchStatus,
		"delete": k.delete, "event": k.event,
		"addFinalizer": k.addFinalizer, "removeFinalizer": k.removeFinalizer,
	} {
		if err := obj.Set(name, fn); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

func (k *k8sModule) clientFor(fn string) Client {
	if k.client == nil {
		k.throwf("%s: k8s client not available", fn)
	}
	return k.client
}

// throwK8s throws err as a JS Error with the server's HTTP code and reason when it has them.
func (k *k8sModule) throwK8s(verb, resource, target string, err error) {
	jsErr := k.newError(fmt.Errorf("%s %s %s: %w", verb, resource, target, err))
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		_ = jsErr.Set("code", int64(st.Code))
		_ = jsErr.Set("reason", string(st.Reason))
	}
	panic(jsErr)
}

// resourceArg reads the resource argument every k8s call starts with.
func (k *k8sModule) resourceArg(fn string, call goja.FunctionCall) string {
	r := k.stringArg(fn, call, 0, "resource")
	if r == "" {
		panic(k.rt.NewTypeError(fn + ": resource is required, e.g. \"apps/v1/deployments\""))
	}
	return r
}

func (k *k8sModule) nameArg(fn string, call goja.FunctionCall, i int) string {
	n := k.stringArg(fn, call, i, "name")
	if n == "" {
		panic(k.rt.NewTypeError(fn + ": name is required"))
	}
	return n
}

// get is k8s.get(resource, namespace, name).
func (k *k8sModule) get(call goja.FunctionCall) goja.Value {
	const fn = "k8s.get"
	defer k.guard(fn)
	res := k.resourceArg(fn, call)
	ns, name := k.stringArg(fn, call, 1, "namespace"), k.nameArg(fn, call, 2)
	obj, err := k.clientFor(fn).Get(k.ctx(), res, ns, name)
	if err != nil {
		k.throwK8s("get", res, joinKey(ns, name), err)
	}
	return k.view(obj)
}

// list is k8s.list(resource, {namespace, labelSelector, fieldSelector}).
func (k *k8sModule) list(call goja.FunctionCall) goja.Value {
	const fn = "k8s.list"
	defer k.guard(fn)
	res := k.resourceArg(fn, call)
	o := k.stringOptions(fn, call.Argument(1), "namespace", "labelSelector", "fieldSelector")
	opts := ListOptions{Namespace: o["namespace"], LabelSelector: o["labelSelector"], FieldSelector: o["fieldSelector"]}
	objs, err := k.clientFor(fn).List(k.ctx(), res, opts)
	if err != nil {
		k.throwK8s("list", res, "in namespace "+fmt.Sprintf("%q", opts.Namespace), err)
	}
	return k.viewList(objs)
}

// create is k8s.create(resource, obj).
func (k *k8sModule) create(call goja.FunctionCall) goja.Value {
	return k.write(call, "k8s.create", "create", Client.Create)
}

// update is k8s.update(resource, obj).
func (k *k8sModule) update(call goja.FunctionCall) goja.Value {
	return k.write(call, "k8s.update", "update", Client.Update)
}

// updateStatus is k8s.updateStatus(resource, obj).
func (k *k8sModule) updateStatus(call goja.FunctionCall) goja.Value {
	return k.write(call, "k8s.updateStatus", "update status of", Client.UpdateStatus)
}

type writeFunc func(Client, context.Context, string, Object) (Object, error)

func (k *k8sModule) write(call goja.FunctionCall, fn, verb string, write writeFunc) goja.Value {
	defer k.guard(fn)
	k.sideEffect(fn)
	res := k.resourceArg(fn, call)
	obj := k.exportObject(fn, call.Argument(1))
	client := k.clientFor(fn)
	out, err := write(client, k.ctx(), res, obj)
	if err != nil {
		k.throwK8s(verb, res, objectKey(obj), err)
	}
	return k.view(out)
}

// patch is k8s.patch(resource, namespace, name, patch, {type, force, fieldManager}).
func (k *k8sModule) patch(call goja.FunctionCall) goja.Value {
	return k.patchWith(call, "k8s.patch", "patch", Client.Patch)
}

// patchStatus is k8s.patchStatus(resource, namespace, name, patch, opts).
func (k *k8sModule) patchStatus(call goja.FunctionCall) goja.Value {
	return k.patchWith(call, "k8s.patchStatus", "patch status of", Client.PatchStatus)
}

type patchFunc func(Client, context.Context, string, string, string, []byte, PatchOptions) (Object, error)

func (k *k8sModule) patchWith(call goja.FunctionCall, fn, verb string, patch patchFunc) goja.Value {
	defer k.guard(fn)
	k.sideEffect(fn)
	res := k.resourceArg(fn, call)
	ns, name := k.stringArg(fn, call, 1, "namespace"), k.nameArg(fn, call, 2)
	body := k.patchBody(fn, call.Argument(3))
	opts := k.patchOptions(fn, call.Argument(4))
	out, err := patch(k.clientFor(fn), k.ctx(), res, ns, name, body, opts)
	if err != nil {
		k.throwK8s(verb, res, joinKey(ns, name), err)
	}
	return k.view(out)
}

// delete is k8s.delete(resource, namespace, name, {propagationPolicy}).
func (k *k8sModule) delete(call goja.FunctionCall) goja.Value {
	const fn = "k8s.delete"
	defer k.guard(fn)
	k.sideEffect(fn)
	res := k.resourceArg(fn, call)
	ns, name := k.stringArg(fn, call, 1, "namespace"), k.nameArg(fn, call, 2)
	o := k.stringOptions(fn, call.Argument(3), "propagationPolicy")
	policy := o["propagationPolicy"]
	switch policy {
	case "", "Orphan", "Background", "Foreground":
	default:
		panic(k.rt.NewTypeError(fmt.Sprintf("%s: propagationPolicy must be Orphan, Background or Foreground, got %q", fn, policy)))
	}
	if err := k.clientFor(fn).Delete(k.ctx(), res, ns, name, DeleteOptions{PropagationPolicy: policy}); err != nil {
		k.throwK8s("delete", res, joinKey(ns, name), err)
	}
	return goja.Undefined()
}

// event is k8s.event(obj, type, reason, message): records a Kubernetes Event about obj.
func (k *k8sModule) event(call goja.FunctionCall) goja.Value {
	const fn = "k8s.event"
	defer k.guard(fn)
	k.sideEffect(fn)
	obj := k.exportObject(fn, call.Argument(0))
	typ := k.stringArg(fn, call, 1, "type")
	switch typ {
	case "":
		typ = "Normal"
	case "Normal", "Warning":
	default:
		panic(k.rt.NewTypeError(fmt.Sprintf("%s: type must be \"Normal\" or \"Warning\", got %q", fn, typ)))
	}
	reason, msg := k.stringArg(fn, call, 2, "reason"), k.stringArg(fn, call, 3, "message")
	if err := k.clientFor(fn).Event(k.ctx(), obj, typ, reason, msg); err != nil {
		k.throwK8s("record event on", "object", objectKey(obj), err)
	}
	return goja.Undefined()
}
