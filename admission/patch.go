package admission

import (
	"encoding/json"
	"fmt"
	"strings"

	"gomodules.xyz/jsonpatch/v2"

	"github.com/jsinformer/jsinformer/scripting"
)

// protectedPaths are the JSON pointers a mutation may not touch: the object's identity. The
// API server would refuse most such patches itself, later and less clearly.
var protectedPaths = []string{"/apiVersion", "/kind", "/metadata/name", "/metadata/namespace", "/metadata/uid"}

// ErrProtectedField is wrapped by the error of a mutation that changes a field identifying
// the object.
var ErrProtectedField = fmt.Errorf("mutate may not change the object's identity")

// jsonPatch is the RFC 6902 patch from the request's object to the one mutate returned,
// computed by diffing their JSON documents (as controller-runtime does); nil when they are
// equal. A patch touching a protected path is refused.
func jsonPatch(orig, changed scripting.Object) ([]byte, error) {
	a, err := json.Marshal(orig)
	if err != nil {
		return nil, fmt.Errorf("encode the request's object: %w", err)
	}
	b, err := json.Marshal(changed)
	if err != nil {
		return nil, fmt.Errorf("encode mutate's object: %w", err)
	}
	ops, err := jsonpatch.CreatePatch(a, b)
	if err != nil {
		return nil, fmt.Errorf("diff mutate's object: %w", err)
	}
	if len(ops) == 0 {
		return nil, nil
	}
	if err := checkProtected(ops); err != nil {
		return nil, err
	}
	sortPatch(ops)
	return json.Marshal(ops)
}

// checkProtected refuses an operation on a protected path, on a parent of one (replacing
// metadata whole) or inside one.
func checkProtected(ops []jsonpatch.Operation) error {
	for _, op := range ops {
		for _, p := range protectedPaths {
			if op.Path == p || strings.HasPrefix(p, op.Path+"/") || strings.HasPrefix(op.Path, p+"/") {
				field := strings.ReplaceAll(strings.TrimPrefix(p, "/"), "/", ".")
				return fmt.Errorf("%w: it changes %s (%s %s); return the object with its apiVersion, kind, "+
					"metadata.name, metadata.namespace and metadata.uid as they came", ErrProtectedField, field, op.Operation, op.Path)
			}
		}
	}
	return nil
}
