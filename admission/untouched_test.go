package admission

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/jsinformer/jsinformer/scripting"
)

// widget is a custom resource's JSON with what a JavaScript round trip loses: integers above
// 2^53 (a field, an array element) and a "__proto__" data key.
const widget = `{"apiVersion":"example.com/v1","kind":"Widget",
 "metadata":{"name":"w","namespace":"default","uid":"u1","labels":{"__proto__":"kept","app":"web"}},
 "spec":{"x":9007199254740993,"items":[{"n":9007199254740995},{"n":1}],"replicas":1}}`

// TestMutatePatchHoldsOnlyWhatTheScriptChanged: however the script copies the object, the
// patch holds the one field it changed, and applied to the request's JSON it leaves the
// integers above 2^53 and the "__proto__" key exactly as they came.
func TestMutatePatchHoldsOnlyWhatTheScriptChanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, patch string }{
		{"util.clone", `const o = util.clone(obj); o.spec.replicas = 2; return o;`,
			`[{"op":"replace","path":"/spec/replicas","value":2}]`},
		{"JSON round trip", `const o = JSON.parse(JSON.stringify(obj)); o.metadata.labels.team = "a"; return o;`,
			`[{"op":"add","path":"/metadata/labels/team","value":"a"}]`},
		{"spreads", `return { ...util.clone(obj), metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, team: "a" } } };`,
			`[{"op":"add","path":"/metadata/labels/team","value":"a"}]`},
		{"an element appended", `const o = util.clone(obj); o.spec.items.push({ n: 2 }); return o;`,
			`[{"op":"add","path":"/spec/items/2","value":{"n":2}}]`},
		{"the last element removed", `const o = util.clone(obj); o.spec.items[1].n = 7; o.spec.items.pop(); return o;`,
			`[{"op":"remove","path":"/spec/items/1"}]`},
		{"the big number changed", `const o = util.clone(obj); o.spec.x = 5; return o;`,
			`[{"op":"replace","path":"/spec/x","value":5}]`},
		{"nothing changed", `return util.clone(obj);`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newRealScript(t, `export default { mutate(obj) { `+tc.body+` } }`)
			d := Mutate(t.Context(), s, scripting.AdmissionRequest{Operation: "CREATE", Object: decodeWidget(t)})
			if !d.Allowed || !samePatch(t, d.Patch, tc.patch) {
				t.Fatalf("patch %s (%+v), want %s", d.Patch, d, tc.patch)
			}
			if d.Patch == nil {
				return
			}
			patched := applyPatch(t, d.Patch)
			for _, kept := range []string{`"x":9007199254740993`, `"n":9007199254740995`, `"__proto__":"kept"`} {
				if tc.name == "the big number changed" && kept == `"x":9007199254740993` {
					continue
				}
				if !bytes.Contains(patched, []byte(kept)) {
					t.Errorf("the patched object lost %s: %s", kept, patched)
				}
			}
		})
	}
}

// TestMutateAllChainKeepsWhatNoScriptChanged: the chain's patch, the sum of two copying
// scripts, holds their two changes only.
func TestMutateAllChainKeepsWhatNoScriptChanged(t *testing.T) {
	t.Parallel()
	a := newRealScript(t, `export default { mutate(obj) { const o = util.clone(obj); o.metadata.labels.a = "1"; return o; } }`)
	b := newRealScript(t, `export default { mutate(obj) { const o = JSON.parse(JSON.stringify(obj)); o.spec.replicas = obj.metadata.labels.a === "1" ? 3 : 0; return o; } }`)
	d, _ := MutateAll(t.Context(), []Script{a, b}, scripting.AdmissionRequest{Operation: "CREATE", Object: decodeWidget(t)})
	want := `[{"op":"add","path":"/metadata/labels/a","value":"1"},{"op":"replace","path":"/spec/replicas","value":3}]`
	if !d.Allowed || !samePatch(t, d.Patch, want) {
		t.Fatalf("chain patch %s (%+v), want %s", d.Patch, d, want)
	}
}

func decodeWidget(t *testing.T) scripting.Object {
	t.Helper()
	obj, err := decodeObject(rawExt([]byte(widget)), "object")
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func applyPatch(t *testing.T, patch []byte) []byte {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply([]byte(widget))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out); err != nil {
		t.Fatal(err)
	}
	return compact.Bytes()
}

func TestJSEqual(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b any
		want bool
	}{
		{int64(9007199254740993), int64(9007199254740992), true},
		{int64(9007199254740993), float64(9007199254740992), true},
		{int64(3), int64(4), false},
		{int64(1), "1", false},
		{map[string]any{protoKey: "p", "a": int64(1)}, map[string]any{"a": int64(1)}, true},
		{map[string]any{"a": int64(1)}, map[string]any{protoKey: "p", "a": int64(1)}, false},
		{map[string]any{protoKey: "p"}, map[string]any{protoKey: "q"}, false},
		{map[string]any{"a": "x"}, map[string]any{"b": "x"}, false},
		{[]any{int64(1)}, []any{int64(1), int64(2)}, false},
		{nil, nil, true},
		{nil, map[string]any{}, false},
	} {
		if got := jsEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("jsEqual(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
