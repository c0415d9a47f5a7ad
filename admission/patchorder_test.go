package admission

import (
	"encoding/json"
	"fmt"
	"testing"

	jsonpatchapply "gopkg.in/evanphx/json-patch.v4"

	"github.com/jsinformer/jsinformer/scripting"
)

// TestPatchIsTheSameEveryTimeAndStillApplies: a mutation touching many fields and shrinking
// and growing arrays gives one patch however the diff's map iteration ran, and that patch
// turns the request's object into mutate's.
func TestPatchIsTheSameEveryTimeAndStillApplies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		before, after  int // array lengths
		labels, fields int
	}{
		{"arrays shrink", 12, 3, 20, 10},
		{"arrays grow", 2, 11, 20, 10},
		{"same lengths", 5, 5, 30, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			orig, changed := patchCase(tc.before, tc.after, tc.labels, tc.fields)
			first, err := jsonPatch(orig, changed)
			if err != nil {
				t.Fatal(err)
			}
			for range 50 {
				again, err := jsonPatch(orig, changed)
				if err != nil {
					t.Fatal(err)
				}
				if string(again) != string(first) {
					t.Fatalf("the patch changed between runs:\n%s\n%s", first, again)
				}
			}
			assertApplies(t, orig, changed, first)
		})
	}
}

func patchCase(before, after, labels, fields int) (scripting.Object, scripting.Object) {
	mk := func(n int, tag string) scripting.Object {
		lbl := map[string]any{}
		for i := range labels {
			lbl[fmt.Sprintf("l%02d", i)] = tag + fmt.Sprint(i)
		}
		spec := map[string]any{}
		for i := range fields {
			spec[fmt.Sprintf("f%d", i)] = tag
		}
		var items []any
		for i := range n {
			items = append(items, map[string]any{"name": fmt.Sprint("c", i), "image": tag, "env": []any{tag, tag}})
		}
		spec["containers"], spec["args"] = items, items
		return scripting.Object{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "p", "namespace": "n", "labels": lbl}, "spec": spec}
	}
	return mk(before, "a"), mk(after, "b")
}

func assertApplies(t *testing.T, orig, changed scripting.Object, patch []byte) {
	t.Helper()
	p, err := jsonpatchapply.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(orig)
	got, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("apply the sorted patch: %v", err)
	}
	want, _ := json.Marshal(changed)
	var g, w any
	_ = json.Unmarshal(got, &g)
	_ = json.Unmarshal(want, &w)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("the sorted patch gives\n%s\nwant\n%s", got, want)
	}
}
