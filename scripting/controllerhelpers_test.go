package scripting

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

// A new lastTransitionTime comes from the script's clock (the virtual one under runner test),
// as Date does, not from the wall clock.
func TestSetStatusConditionUsesTheScriptsClock(t *testing.T) {
	t.Parallel()
	virtual := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	s := newTestScript(t, "h.js", `export default { onAdd(obj, ctx) {
globalThis.out = [util.setStatusCondition([], { type: "Ready", status: "True", reason: "Up", message: "" })[0].lastTransitionTime,
  new Date().toISOString()];
} };`, Options{Timeout: 5 * time.Second, Now: func() time.Time { return virtual }})
	if err := s.OnAdd(Object{}, Event{}); err != nil {
		t.Fatalf("onAdd: %v", err)
	}
	if got, want := outJSON(t, s), `["2030-05-06T07:08:09Z","2030-05-06T07:08:09.000Z"]`; got != want {
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

// Only a change made meanwhile (409, or the 422 of a patch that did not apply, shaped as
// kube-apiserver and memcluster shape it) is retried, after a pause; a validation error's 422
// is thrown at once.
func TestFinalizerEditsRetryOnlyAChangeMadeMeanwhile(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Resource: "configmaps"}
	cases := []struct {
		name    string
		err     error
		patches int32
		out     string
	}{
		{"conflict", apierrors.NewConflict(gr, "x", nil), 2, `["other","mine"]`},
		{"failed test", apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "",
			"testing value /metadata/resourceVersion failed: test failed", 0, false), 2, `["other","mine"]`},
		{"failed test, message kept", apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "",
			"testing value /metadata/resourceVersion failed: test failed", 0, true), 2, `["other","mine"]`},
		{"invalid object", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x",
			field.ErrorList{field.Invalid(field.NewPath("metadata", "finalizers"), "mine", "not a qualified name")}), 1, `422`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var patches atomic.Int32
			var times []time.Time
			client := &fakeClient{fn: func(_ context.Context, call fakeCall) (Object, error) {
				switch call.Method {
				case "Get":
					return Object{"metadata": map[string]any{"name": "x", "resourceVersion": "7", "finalizers": []any{"other"}}}, nil
				case "Patch":
					times = append(times, time.Now())
					if patches.Add(1) == 1 {
						return nil, c.err
					}
					return Object{"metadata": map[string]any{"name": "x", "finalizers": []any{"other", "mine"}}}, nil
				}
				return nil, nil
			}}
			got := runJS(t, client, `try { globalThis.out = k8s.addFinalizer("v1/configmaps", "ns", "x", "mine").metadata.finalizers; }
catch (e) { globalThis.out = e.code; }`, Object{})
			if got != c.out || patches.Load() != c.patches {
				t.Fatalf("got %s after %d patches; want %s after %d", got, patches.Load(), c.out, c.patches)
			}
			if len(times) == 2 && times[1].Sub(times[0]) < finalizerBackoff {
				t.Errorf("retried after %v, want a pause of at least %v", times[1].Sub(times[0]), finalizerBackoff)
			}
		})
	}
}
