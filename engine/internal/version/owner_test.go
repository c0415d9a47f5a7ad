package version

import (
	"testing"

	"github.com/jsinformer/jsinformer/scripting"
)

// TestControllerKey: the owner key comes from the ownerReference with controller: true only,
// namespaced as its dependent when the reconciled resource is namespaced.
func TestControllerKey(t *testing.T) {
	t.Parallel()
	ref := func(name string, controller bool) any {
		return map[string]any{"kind": "Deployment", "name": name, "controller": controller}
	}
	obj := func(ns string, refs ...any) scripting.Object {
		meta := map[string]any{"name": "child"}
		if ns != "" {
			meta["namespace"] = ns
		}
		if refs != nil {
			meta["ownerReferences"] = refs
		}
		return scripting.Object{"metadata": meta}
	}
	tests := []struct {
		name       string
		obj        scripting.Object
		namespaced bool
		want       string
		ok         bool
	}{
		{"namespaced owner", obj("ns", ref("web", true)), true, "ns/web", true},
		{"cluster-scoped reconciled resource", obj("ns", ref("web", true)), false, "web", true},
		{"cluster-scoped dependent", obj("", ref("web", true)), true, "web", true},
		{"only the controller counts", obj("ns", ref("other", false), ref("web", true)), true, "ns/web", true},
		{"no controller", obj("ns", ref("web", false)), true, "", false},
		{"controller without a name", obj("ns", ref("", true)), true, "", false},
		{"no owners", obj("ns"), true, "", false},
		{"no metadata", scripting.Object{}, true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ControllerKey(tt.obj, tt.namespaced)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ControllerKey = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
