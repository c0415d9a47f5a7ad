package scripting

import (
	"fmt"

	"github.com/dop251/goja"
)

// Objects and patches leave JS as JSON, produced by the runtime's own JSON.stringify so they
// mean exactly what the script would see printed (views serialize like plain objects).

func (k *k8sModule) toJSON(fn string, v goja.Value) []byte {
	j := k.stringify(fn, v, goja.Undefined(), goja.Undefined())
	if isMissing(j) {
		panic(k.rt.NewTypeError(fmt.Sprintf("%s: %s has no JSON form", fn, typeName(v))))
	}
	return []byte(j.String())
}

// exportObject converts a JS object (a view or a plain object) into a new unstructured
// Object. A view is copied too: the client may modify what it is given, the cache must not be.
func (k *k8sModule) exportObject(fn string, v goja.Value) Object {
	if obj, ok := v.(*goja.Object); !ok || obj.ClassName() == "Array" || isFunction(obj) {
		panic(k.rt.NewTypeError(fmt.Sprintf("%s: object must be a Kubernetes object, got %s", fn, typeName(v))))
	}
	x, err := decodeJSON(k.toJSON(fn, v))
	if err != nil {
		k.throwf("%s: %w", fn, err)
	}
	m, _ := x.(map[string]any)
	return m
}

// patchBody accepts a patch object, a JSON patch array, or a string sent as it is.
func (k *k8sModule) patchBody(fn string, v goja.Value) []byte {
	if isString(v) {
		k.budget(fn).addString(v)
		return []byte(v.String())
	}
	if _, ok := v.(*goja.Object); !ok {
		panic(k.rt.NewTypeError(fmt.Sprintf("%s: patch must be an object, an array or a string, got %s", fn, typeName(v))))
	}
	return k.toJSON(fn, v)
}

func (k *k8sModule) patchOptions(fn string, v goja.Value) PatchOptions {
	o := k.options(fn, v, "type", "force", "fieldManager")
	var opts PatchOptions
	if t, ok := o["type"]; ok {
		opts.Type = t.String()
	}
	if opts.Type == "" {
		opts.Type = "merge"
	}
	if _, ok := opts.PatchType(); !ok {
		panic(k.rt.NewTypeError(fmt.Sprintf(
			"%s: patch type must be \"merge\", \"json\", \"strategic\" or \"apply\", got %q", fn, opts.Type)))
	}
	if f, ok := o["force"]; ok {
		opts.Force = f.ToBoolean()
	}
	if m, ok := o["fieldManager"]; ok {
		opts.FieldManager = m.String()
	}
	return opts // an empty FieldManager is the Client's default
}

// objectKey names an object in messages: namespace/name, or kind when it has no name yet.
func objectKey(obj Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	if name == "" {
		if gen, _ := meta["generateName"].(string); gen != "" {
			name = gen + "*"
		}
	}
	return joinKey(ns, name)
}
