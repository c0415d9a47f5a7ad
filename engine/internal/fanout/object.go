package fanout

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/scripting"
)

// recreated reports whether an update joins two objects: the same key with another
// metadata.uid means the first was deleted and the second created while the watch was down,
// or between two lists. Scripts then see the delete (its final state unknown) and the add.
func recreated(old, obj scripting.Object) bool {
	oldUID, newUID := uidOf(old), uidOf(obj)
	return oldUID != "" && newUID != "" && oldUID != newUID
}

func uidOf(obj scripting.Object) string {
	meta, _ := obj["metadata"].(map[string]any)
	uid, _ := meta["uid"].(string)
	return uid
}

// unwrap returns the object's map and its client-go key ("namespace/name", or "name" for a
// cluster-scoped object), read straight from the map: this runs for every event, and
// cache.MetaNamespaceKeyFunc's generic accessors cost more than the rest of the hand-off.
func unwrap(obj any) (scripting.Object, string, bool) {
	u, key, _, ok := unwrapMeta(obj)
	return u, key, ok
}

// unwrapMeta is unwrap, and the object's metadata.resourceVersion: read here, while the
// metadata is in the CPU's cache, so that the worker's trace record (package
// engine/internal/version) need not fetch it from memory again for every object of a reload.
func unwrapMeta(obj any) (u scripting.Object, key, rv string, ok bool) {
	uns, ok := obj.(*unstructured.Unstructured)
	if !ok || uns == nil {
		return nil, "", "", false
	}
	meta, _ := uns.Object["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	rv, _ = meta["resourceVersion"].(string)
	if ns, _ := meta["namespace"].(string); ns != "" {
		return uns.Object, ns + "/" + name, rv, true
	}
	return uns.Object, name, rv, true
}
