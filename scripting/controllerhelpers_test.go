package scripting

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// runJS runs a handler body in onAdd(obj) and returns what it left in globalThis.out.
func runJS(t *testing.T, client Client, body string, obj Object) string {
	t.Helper()
	s := newTestScript(t, "h.js", "export default { onAdd(obj, ctx) {\n"+body+"\n} };", Options{Timeout: 5 * time.Second, Client: client})
	if err := s.OnAdd(obj, Event{}); err != nil {
		t.Fatalf("onAdd: %v", err)
	}
	return outJSON(t, s)
}

func TestOwnerReference(t *testing.T) {
	t.Parallel()
	owner := Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "uid": "u-1"}}
	got := runJS(t, nil, `globalThis.out = [util.ownerReference(obj), util.ownerReference(obj, { controller: false })];`, owner)
	want := `[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"Deployment","name":"web","uid":"u-1"},` +
		`{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":false,"kind":"Deployment","name":"web","uid":"u-1"}]`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// lastTransitionTime moves only when the status changes, as meta.SetStatusCondition does.
func TestSetStatusCondition(t *testing.T) {
	t.Parallel()
	obj := Object{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "Up", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}}
	got := runJS(t, nil, `
const same = util.setStatusCondition(obj.status.conditions, { type: "Ready", status: "True", reason: "StillUp", message: "m" });
const flipped = util.setStatusCondition(obj.status.conditions, { type: "Ready", status: "False", reason: "Down", message: "x" });
const added = util.setStatusCondition(undefined, { type: "Synced", status: "True", reason: "Ok", message: "" });
globalThis.out = {
  sameTime: same[0].lastTransitionTime, sameReason: same[0].reason,
  flippedMoved: flipped[0].lastTransitionTime !== "2026-01-01T00:00:00Z", flippedStatus: flipped[0].status,
  added: added.length, addedHasTime: typeof added[0].lastTransitionTime === "string",
  untouched: obj.status.conditions[0].reason,
};`, obj)
	want := `{"sameTime":"2026-01-01T00:00:00Z","sameReason":"StillUp","flippedMoved":true,"flippedStatus":"False","added":1,"addedHasTime":true,"untouched":"Up"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A finalizer patch tests the resourceVersion it read; a conflicting change makes it read
// again and retry.
func TestFinalizerEditsRetryOnConflict(t *testing.T) {
	t.Parallel()
	var patches atomic.Int32
	client := &fakeClient{fn: func(_ context.Context, c fakeCall) (Object, error) {
		switch c.Method {
		case "Get":
			return Object{"metadata": map[string]any{"name": "x", "resourceVersion": "7", "finalizers": []any{"other"}}}, nil
		case "Patch":
			if patches.Add(1) == 1 {
				return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", nil)
			}
			return Object{"metadata": map[string]any{"name": "x", "finalizers": []any{"other", "mine"}}}, nil
		}
		return nil, nil
	}}
	got := runJS(t, client, `globalThis.out = k8s.addFinalizer("v1/configmaps", "ns", "x", "mine").metadata.finalizers;`, Object{})
	if got != `["other","mine"]` {
		t.Fatalf("got %s", got)
	}
	var gets int
	for _, c := range client.recorded() {
		if c.Method == "Get" {
			gets++
		}
		if c.Method == "Patch" && (c.PatchOpts.Type != "json" || !strings.Contains(c.Patch, `{"op":"test","path":"/metadata/resourceVersion","value":"7"}`) ||
			!strings.Contains(c.Patch, `"path":"/metadata/finalizers/-","value":"mine"`)) {
			t.Errorf("patch %s (%s)", c.Patch, c.PatchOpts.Type)
		}
	}
	if gets != 2 || patches.Load() != 2 {
		t.Errorf("%d reads and %d patches; want a retry after the conflict (2 and 2)", gets, patches.Load())
	}
}
