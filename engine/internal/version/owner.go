package version

import "github.com/jsinformer/jsinformer/scripting"

// ControllerKey is the key of obj's controller owner, from the ownerReference with
// controller: true: "namespace/name" in obj's namespace when the reconciled resource is
// namespaced (an owner is in its dependent's namespace, or cluster-scoped), else "name".
func ControllerKey(obj scripting.Object, namespaced bool) (string, bool) {
	meta, _ := obj["metadata"].(map[string]any)
	refs, _ := meta["ownerReferences"].([]any)
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		if controller, _ := ref["controller"].(bool); !controller {
			continue
		}
		name, _ := ref["name"].(string)
		if name == "" {
			return "", false
		}
		if ns, _ := meta["namespace"].(string); ns != "" && namespaced {
			return ns + "/" + name, true
		}
		return name, true
	}
	return "", false
}
