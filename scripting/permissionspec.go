package scripting

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/dop251/goja"
)

// The definition's `permissions`: what a script's k8s calls need beyond what the runner can
// read from its source (calls whose resource is known at run time only, see staticcalls.go).
//
//	permissions: [{ resource: "v1/secrets", verbs: ["get", "patch"], namespaces: ["team-a"] }]

// PermissionSpec is one entry of a definition's `permissions`.
type PermissionSpec struct {
	Resource   string   // as with --gvr; a subresource as "<resource>/status"
	Verbs      []string // sorted, unique
	Namespaces []string // sorted; empty means every namespace
}

// PermissionVerbs are the verbs a `permissions` entry may name: the API's resource verbs.
var PermissionVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// maxPermissions bounds the list, which a script could give any length.
const maxPermissions = 1000

var permissionKeys = []string{"resource", "verbs", "namespaces"}

// readPermissions reads the optional `permissions` field: an array of entries.
func readPermissions(v goja.Value, l locator) ([]PermissionSpec, error) {
	if isMissing(v) {
		return nil, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, invalidf(l.file, l.line("permissions"), fmt.Sprintf(
			"'permissions' must be an array of {resource, verbs, namespaces}, got %s", typeName(v)))
	}
	n := int(min(obj.Get("length").ToInteger(), maxPermissions+1))
	if n > maxPermissions {
		return nil, invalidf(l.file, l.line("permissions"), fmt.Sprintf("'permissions' has more than %d entries", maxPermissions))
	}
	out := make([]PermissionSpec, 0, n)
	for i := range n {
		p, err := readPermission(obj.Get(strconv.Itoa(i)), fmt.Sprintf("permissions[%d]", i), l)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func readPermission(v goja.Value, where string, l locator) (PermissionSpec, error) {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return PermissionSpec{}, invalidf(l.file, l.line("permissions"), fmt.Sprintf(
			"'%s' must be an object {resource, verbs, namespaces}, got %s", where, typeName(v)))
	}
	if err := l.checkKeys(obj, where, permissionKeys); err != nil {
		return PermissionSpec{}, err
	}
	var res string
	if r := obj.Get("resource"); !isMissing(r) {
		res, _ = r.Export().(string)
	}
	if res == "" {
		return PermissionSpec{}, invalidf(l.file, l.line("permissions"), fmt.Sprintf(
			"'%s.resource' must name a resource, e.g. \"v1/secrets\", got %s", where, typeName(obj.Get("resource"))))
	}
	verbs, err := readStrings(obj.Get("verbs"), where+".verbs", l)
	if err != nil {
		return PermissionSpec{}, err
	}
	if len(verbs) == 0 {
		return PermissionSpec{}, invalidf(l.file, l.line("verbs"), fmt.Sprintf("'%s.verbs' must name at least one verb", where))
	}
	for _, verb := range verbs {
		if !slices.Contains(PermissionVerbs, verb) {
			return PermissionSpec{}, invalidf(l.file, l.line("verbs"), fmt.Sprintf(
				"'%s.verbs': %q is not one of %v", where, verb, PermissionVerbs))
		}
	}
	namespaces, err := readStrings(obj.Get("namespaces"), where+".namespaces", l)
	if err != nil {
		return PermissionSpec{}, err
	}
	return PermissionSpec{Resource: res, Verbs: verbs, Namespaces: namespaces}, nil
}

// readStrings reads an optional array of strings, sorted and unique.
func readStrings(v goja.Value, where string, l locator) ([]string, error) {
	if isMissing(v) {
		return nil, nil
	}
	key := lastKey(where)
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, invalidf(l.file, l.line(key), fmt.Sprintf("'%s' must be an array of strings, got %s", where, typeName(v)))
	}
	n := int(min(obj.Get("length").ToInteger(), maxPermissions+1))
	if n > maxPermissions {
		return nil, invalidf(l.file, l.line(key), fmt.Sprintf("'%s' has more than %d entries", where, maxPermissions))
	}
	out := make([]string, 0, n)
	for i := range n {
		el := obj.Get(strconv.Itoa(i))
		var s string
		if !isMissing(el) {
			s, ok = el.Export().(string)
		}
		if isMissing(el) || !ok {
			return nil, invalidf(l.file, l.line(key), fmt.Sprintf("'%s[%d]' must be a string, got %s",
				where, i, typeName(obj.Get(strconv.Itoa(i)))))
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
