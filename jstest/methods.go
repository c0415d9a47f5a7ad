package jstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// The methods of h. Writes change the cluster as a user would (field manager "harness"),
// then run until the engine is quiet, without moving the clock: when they return, the
// plugin has handled everything they caused that is due now.

const harnessManager = "harness"

func (h *harness) object() goja.Value {
	o := h.f.rt.NewObject()
	methods := map[string]any{
		"add": h.add, "update": h.update, "delete": h.delete, "patch": h.patch,
		"get": h.get, "list": h.list, "settle": h.settle, "advance": h.advance, "now": h.now,
		"replay": h.replay, "metrics": h.metrics, "metricsText": h.metricsText,
		"explain": h.explain, "admit": h.admit, "audit": h.audit,
	}
	for name, fn := range methods {
		_ = o.Set(name, fn)
	}
	_ = o.Set("http", h.httpObject())
	_ = o.Set("store", h.storeObject(h.plugin))
	_ = o.Set("outbox", h.outboxObject(h.plugin))
	getters := map[string]func() goja.Value{
		"writes": func() goja.Value { return h.f.toJS(h.writeList()) },
		"logs":   func() goja.Value { return h.f.toJS(h.logs.root.snapshot(&h.logs.root.logs)) },
		"errors": func() goja.Value { return h.f.toJS(h.logs.root.snapshot(&h.logs.root.errors)) },
	}
	for name, get := range getters {
		_ = o.DefineAccessorProperty(name, h.f.rt.ToValue(get), nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	return o
}

// objectArg reads an object argument; it needs apiVersion, kind and a name.
func (h *harness) objectArg(v goja.Value, call string) *unstructured.Unstructured {
	data, err := h.f.toGo(v)
	m, ok := data.(map[string]any)
	if err != nil || !ok {
		h.f.throw(fmt.Errorf("h.%s: want an object with apiVersion, kind and metadata", call))
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() == "" || u.GetKind() == "" || (u.GetName() == "" && u.GetGenerateName() == "") {
		h.f.throw(fmt.Errorf("h.%s: the object needs apiVersion, kind and metadata.name", call))
	}
	return u
}

// add is h.add(obj) and h.add(path): an object, or what harness({objects}) accepts of a
// file (a YAML or JSON file of one or more documents, List kinds expanded, or a recording's
// initial list), created one after the other, each followed by a quiet engine, as successive
// h.add calls would. A path returns the stored objects, in order.
func (h *harness) add(v goja.Value) goja.Value {
	if v == nil || v.ExportType() != reflect.TypeFor[string]() {
		return h.f.toJS(h.addOne(h.objectArg(v, "add")).Object)
	}
	objs, err := itemObjects(h.f.dir, v.String())
	if err != nil {
		h.f.throw(fmt.Errorf("h.add: %w", err))
	}
	out := make([]any, 0, len(objs))
	for _, obj := range objs {
		out = append(out, h.addOne(obj).Object)
	}
	return h.f.toJS(out)
}

func (h *harness) addOne(obj *unstructured.Unstructured) *unstructured.Unstructured {
	created, err := h.put(obj)
	h.check(err)
	h.quiesce()
	return created
}

// put creates obj as kubectl create would, then sets its status through the status
// subresource when it has one and obj carries a status. A missing namespace is created.
func (h *harness) put(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res, ns, err := h.place(obj)
	if err != nil {
		return nil, err
	}
	status := obj.Object["status"]
	created, err := h.cluster.Create(res.GVR, ns, obj, memcluster.WriteOptions{FieldManager: harnessManager})
	if err != nil {
		return nil, err
	}
	return h.setStatus(res, created, status)
}

// setStatus writes status through the status subresource, when the resource has one and
// status is not what is stored. The write is unconditional: the plugin may have changed the
// object since (its handlers run as soon as the object is written).
func (h *harness) setStatus(res memcluster.Resource, stored *unstructured.Unstructured, status any) (*unstructured.Unstructured, error) {
	if status == nil || !res.Status || equality.Semantic.DeepEqual(status, stored.Object["status"]) {
		return stored, nil
	}
	next := stored.DeepCopy()
	next.Object["status"] = status
	next.SetResourceVersion("")
	return h.cluster.Update(res.GVR, stored.GetNamespace(), next, memcluster.WriteOptions{FieldManager: harnessManager, Subresource: "status"})
}

// place finds obj's resource and namespace ("default" when a namespaced object names none),
// creating the namespace if it does not exist.
func (h *harness) place(obj *unstructured.Unstructured) (memcluster.Resource, string, error) {
	res, err := h.cluster.ResourceFor(obj.GetAPIVersion(), obj.GetKind())
	if err != nil || !res.Namespaced {
		return res, "", err
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = "default"
		obj.SetNamespace(ns)
	}
	if _, err := h.cluster.Get(memcluster.NamespacesGVR, "", ns); apierrors.IsNotFound(err) {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
		nsObj.SetName(ns)
		if _, err := h.cluster.Create(memcluster.NamespacesGVR, "", nsObj, memcluster.WriteOptions{FieldManager: harnessManager}); err != nil {
			return res, ns, err
		}
	}
	return res, ns, nil
}

func (h *harness) update(v goja.Value) goja.Value {
	obj := h.objectArg(v, "update")
	res, ns, err := h.place(obj)
	h.check(err)
	status := obj.Object["status"]
	updated, err := h.cluster.Update(res.GVR, ns, obj, memcluster.WriteOptions{FieldManager: harnessManager})
	h.check(err)
	updated, err = h.setStatus(res, updated, status)
	h.check(err)
	h.quiesce()
	return h.f.toJS(updated.Object)
}

// delete is h.delete(obj) or h.delete(resource, namespace, name).
func (h *harness) delete(call goja.FunctionCall) goja.Value {
	var res memcluster.Resource
	var ns, name string
	if first, ok := call.Argument(0).(*goja.Object); ok && first.ClassName() == "Object" {
		obj := h.objectArg(first, "delete")
		var err error
		res, ns, err = h.place(obj)
		h.check(err)
		name = obj.GetName()
	} else {
		res.GVR = h.resource(call.Argument(0).String(), "delete").GVR
		ns, name = call.Argument(1).String(), call.Argument(2).String()
	}
	_, err := h.cluster.Delete(res.GVR, ns, name, memcluster.WriteOptions{})
	h.check(err)
	h.quiesce()
	return goja.Undefined()
}

func (h *harness) patch(resource, namespace, name string, patch goja.Value, opts *goja.Object) goja.Value {
	res := h.resource(resource, "patch")
	pt, data := types.MergePatchType, []byte(nil)
	if s, ok := patch.Export().(string); ok {
		data = []byte(s)
	} else {
		body, err := h.f.toGo(patch)
		h.check(err)
		data, _ = json.Marshal(body)
	}
	if opts != nil && opts.Get("type") != nil && !goja.IsUndefined(opts.Get("type")) {
		pt = patchTypes[opts.Get("type").String()]
		if pt == "" {
			h.f.throw(fmt.Errorf("h.patch: type must be merge, json, strategic or apply"))
		}
	}
	out, err := h.cluster.Patch(res.GVR, namespace, name, pt, data, memcluster.WriteOptions{FieldManager: harnessManager, Force: true})
	h.check(err)
	h.quiesce()
	return h.f.toJS(out.Object)
}

var patchTypes = map[string]types.PatchType{"merge": types.MergePatchType, "json": types.JSONPatchType,
	"strategic": types.StrategicMergePatchType, "apply": types.ApplyPatchType}

func (h *harness) resource(name, call string) dynamicinformer.Resource {
	res, err := h.resolve.Resolve(name)
	if err != nil {
		h.f.throw(fmt.Errorf("h.%s: %w", call, err))
	}
	return res
}

// get returns the object, or null when it does not exist.
func (h *harness) get(resource, namespace, name string) goja.Value {
	obj, err := h.cluster.Get(h.resource(resource, "get").GVR, namespace, name)
	if apierrors.IsNotFound(err) {
		return goja.Null()
	}
	h.check(err)
	return h.f.toJS(obj.Object)
}

// listOptionKeys are the properties h.list accepts in its options.
var listOptionKeys = []string{"namespace", "labelSelector", "fieldSelector"}

func (h *harness) list(resource string, opts goja.Value) goja.Value {
	var lo struct {
		Namespace     string `json:"namespace"`
		LabelSelector string `json:"labelSelector"`
		FieldSelector string `json:"fieldSelector"`
	}
	if !missing(opts) {
		data, err := h.f.toGo(opts)
		h.check(err)
		h.check(decodeStrict(data, &lo, listOptionKeys...))
	}
	list, err := h.cluster.List(h.resource(resource, "list").GVR, lo.Namespace,
		metav1.ListOptions{LabelSelector: lo.LabelSelector, FieldSelector: lo.FieldSelector})
	h.check(err)
	items := make([]any, len(list.Items))
	for i := range list.Items {
		items[i] = list.Items[i].Object
	}
	return h.f.toJS(items)
}

// settle runs until quiet, moving the clock through delayed keys due within opts.within
// (default 1h).
func (h *harness) settle(opts goja.Value) goja.Value {
	within := defaultSettleWithin
	if o, ok := opts.(*goja.Object); ok && o.Get("within") != nil {
		within = h.duration(o.Get("within"), "settle")
	}
	h.check(h.pump(func() error { _, err := h.off.Settle(h.f.ctx, within); return err }))
	return goja.Undefined()
}

func (h *harness) advance(d goja.Value) goja.Value {
	by := h.duration(d, "advance")
	h.check(h.pump(func() error { return h.off.Advance(h.f.ctx, by) }))
	return goja.Undefined()
}

// now is the virtual time, as a Date.
func (h *harness) now() goja.Value {
	d, err := h.f.rt.New(h.f.rt.Get("Date"), h.f.rt.ToValue(h.off.Now().UnixMilli()))
	h.check(err)
	return d
}

// duration reads a Go duration string ("10m", "1h30m") or a number of milliseconds.
func (h *harness) duration(v goja.Value, call string) time.Duration {
	if s, ok := v.Export().(string); ok {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			h.f.throw(fmt.Errorf("h.%s: %q is not a duration such as \"30s\" or \"10m\"", call, s))
		}
		return d
	}
	ms := v.ToFloat()
	if ms < 0 || ms != ms {
		h.f.throw(fmt.Errorf("h.%s: want a duration (\"10m\") or milliseconds", call))
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func (h *harness) quiesce() {
	h.check(h.pump(func() error { _, err := h.off.Settle(h.f.ctx, 0); return err }))
}

func (h *harness) check(err error) {
	if err != nil {
		h.f.throw(err)
	}
}

// writeList is h.writes: what the plugin sent, in order.
func (h *harness) writeList() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]map[string]any, 0, len(h.writes))
	for _, w := range h.writes {
		m := map[string]any{"verb": w.Verb, "resource": dynamicinformer.FormatGVR(w.Resource),
			"namespace": w.Namespace, "name": w.Name, "body": w.Body, "dryRun": w.DryRun, "warnings": orEmpty(w.Warnings)}
		if w.PatchType != "" {
			m["patchType"] = patchTypeName(w.PatchType)
		}
		if w.PropagationPolicy != "" {
			m["propagationPolicy"] = w.PropagationPolicy
		}
		if w.Err != nil {
			e := map[string]any{"message": w.Err.Error()}
			if code, reason, ok := apiStatus(w.Err); ok {
				e["code"], e["reason"] = code, reason
			}
			m["error"] = e
		}
		out = append(out, m)
	}
	return out
}

func patchTypeName(pt types.PatchType) string {
	for name, t := range patchTypes {
		if t == pt {
			return name
		}
	}
	return string(pt)
}

// decodeStrict decodes JSON-shaped data into out, refusing keys other than allowed.
func decodeStrict(data any, out any, allowed ...string) error {
	m, ok := data.(map[string]any)
	if !ok {
		return errors.New("options must be an object")
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("unknown option '%s' (valid: %s)", k, strings.Join(allowed, ", "))
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// missing reports an argument that was not given, or given as undefined or null.
func missing(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }
