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

func (s *instance) newK8s() (*goja.Object, error) {
	k := s.rt.NewObject()
	for name, fn := range map[string]func(goja.FunctionCall) goja.Value{
		"get": s.k8sGet, "list": s.k8sList, "create": s.k8sCreate, "update": s.k8sUpdate,
		"updateStatus": s.k8sUpdateStatus, "patch": s.k8sPatch, "patchStatus": s.k8sPatchStatus,
		"delete": s.k8sDelete, "event": s.k8sEvent,
		"addFinalizer": s.k8sAddFinalizer, "removeFinalizer": s.k8sRemoveFinalizer,
	} {
		if err := k.Set(name, fn); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (s *instance) clientFor(fn string) Client {
	if s.client == nil {
		s.throwf("%s: k8s client not available", fn)
	}
	return s.client
}

// throwK8s throws err as a JS Error with the server's HTTP code and reason when it has them.
func (s *instance) throwK8s(verb, resource, target string, err error) {
	jsErr := s.newError(fmt.Errorf("%s %s %s: %w", verb, resource, target, err))
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		_ = jsErr.Set("code", int64(st.Code))
		_ = jsErr.Set("reason", string(st.Reason))
	}
	panic(jsErr)
}

// resourceArg reads the resource argument every k8s call starts with.
func (s *instance) resourceArg(fn string, call goja.FunctionCall) string {
	r := s.stringArg(fn, call, 0, "resource")
	if r == "" {
		panic(s.rt.NewTypeError(fn + ": resource is required, e.g. \"apps/v1/deployments\""))
	}
	return r
}

func (s *instance) nameArg(fn string, call goja.FunctionCall, i int) string {
	n := s.stringArg(fn, call, i, "name")
	if n == "" {
		panic(s.rt.NewTypeError(fn + ": name is required"))
	}
	return n
}

// k8sGet is k8s.get(resource, namespace, name).
func (s *instance) k8sGet(call goja.FunctionCall) goja.Value {
	const fn = "k8s.get"
	defer s.guard(fn)
	res := s.resourceArg(fn, call)
	ns, name := s.stringArg(fn, call, 1, "namespace"), s.nameArg(fn, call, 2)
	obj, err := s.clientFor(fn).Get(s.context(), res, ns, name)
	if err != nil {
		s.throwK8s("get", res, joinKey(ns, name), err)
	}
	return s.view(obj)
}

// k8sList is k8s.list(resource, {namespace, labelSelector, fieldSelector}).
func (s *instance) k8sList(call goja.FunctionCall) goja.Value {
	const fn = "k8s.list"
	defer s.guard(fn)
	res := s.resourceArg(fn, call)
	o := s.stringOptions(fn, call.Argument(1), "namespace", "labelSelector", "fieldSelector")
	opts := ListOptions{Namespace: o["namespace"], LabelSelector: o["labelSelector"], FieldSelector: o["fieldSelector"]}
	objs, err := s.clientFor(fn).List(s.context(), res, opts)
	if err != nil {
		s.throwK8s("list", res, "in namespace "+fmt.Sprintf("%q", opts.Namespace), err)
	}
	return s.viewList(objs)
}

// k8sCreate is k8s.create(resource, obj).
func (s *instance) k8sCreate(call goja.FunctionCall) goja.Value {
	return s.k8sWrite(call, "k8s.create", "create", Client.Create)
}

// k8sUpdate is k8s.update(resource, obj).
func (s *instance) k8sUpdate(call goja.FunctionCall) goja.Value {
	return s.k8sWrite(call, "k8s.update", "update", Client.Update)
}

// k8sUpdateStatus is k8s.updateStatus(resource, obj).
func (s *instance) k8sUpdateStatus(call goja.FunctionCall) goja.Value {
	return s.k8sWrite(call, "k8s.updateStatus", "update status of", Client.UpdateStatus)
}

type writeFunc func(Client, context.Context, string, Object) (Object, error)

func (s *instance) k8sWrite(call goja.FunctionCall, fn, verb string, write writeFunc) goja.Value {
	defer s.guard(fn)
	res := s.resourceArg(fn, call)
	obj := s.exportObject(fn, call.Argument(1))
	client := s.clientFor(fn)
	out, err := write(client, s.context(), res, obj)
	if err != nil {
		s.throwK8s(verb, res, objectKey(obj), err)
	}
	return s.view(out)
}

// k8sPatch is k8s.patch(resource, namespace, name, patch, {type, force, fieldManager}).
func (s *instance) k8sPatch(call goja.FunctionCall) goja.Value {
	return s.k8sPatchWith(call, "k8s.patch", "patch", Client.Patch)
}

// k8sPatchStatus is k8s.patchStatus(resource, namespace, name, patch, opts).
func (s *instance) k8sPatchStatus(call goja.FunctionCall) goja.Value {
	return s.k8sPatchWith(call, "k8s.patchStatus", "patch status of", Client.PatchStatus)
}

type patchFunc func(Client, context.Context, string, string, string, []byte, PatchOptions) (Object, error)

func (s *instance) k8sPatchWith(call goja.FunctionCall, fn, verb string, patch patchFunc) goja.Value {
	defer s.guard(fn)
	res := s.resourceArg(fn, call)
	ns, name := s.stringArg(fn, call, 1, "namespace"), s.nameArg(fn, call, 2)
	body := s.patchBody(fn, call.Argument(3))
	opts := s.patchOptions(fn, call.Argument(4))
	out, err := patch(s.clientFor(fn), s.context(), res, ns, name, body, opts)
	if err != nil {
		s.throwK8s(verb, res, joinKey(ns, name), err)
	}
	return s.view(out)
}

// k8sDelete is k8s.delete(resource, namespace, name, {propagationPolicy}).
func (s *instance) k8sDelete(call goja.FunctionCall) goja.Value {
	const fn = "k8s.delete"
	defer s.guard(fn)
	res := s.resourceArg(fn, call)
	ns, name := s.stringArg(fn, call, 1, "namespace"), s.nameArg(fn, call, 2)
	o := s.stringOptions(fn, call.Argument(3), "propagationPolicy")
	policy := o["propagationPolicy"]
	switch policy {
	case "", "Orphan", "Background", "Foreground":
	default:
		panic(s.rt.NewTypeError(fmt.Sprintf("%s: propagationPolicy must be Orphan, Background or Foreground, got %q", fn, policy)))
	}
	if err := s.clientFor(fn).Delete(s.context(), res, ns, name, DeleteOptions{PropagationPolicy: policy}); err != nil {
		s.throwK8s("delete", res, joinKey(ns, name), err)
	}
	return goja.Undefined()
}

// k8sEvent is k8s.event(obj, type, reason, message): records a Kubernetes Event about obj.
func (s *instance) k8sEvent(call goja.FunctionCall) goja.Value {
	const fn = "k8s.event"
	defer s.guard(fn)
	obj := s.exportObject(fn, call.Argument(0))
	typ := s.stringArg(fn, call, 1, "type")
	switch typ {
	case "":
		typ = "Normal"
	case "Normal", "Warning":
	default:
		panic(s.rt.NewTypeError(fmt.Sprintf("%s: type must be \"Normal\" or \"Warning\", got %q", fn, typ)))
	}
	reason, msg := s.stringArg(fn, call, 2, "reason"), s.stringArg(fn, call, 3, "message")
	if err := s.clientFor(fn).Event(s.context(), obj, typ, reason, msg); err != nil {
		s.throwK8s("record event on", "object", objectKey(obj), err)
	}
	return goja.Undefined()
}
