package unstructuredjson_test

import (
	"reflect"
	"testing"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// sameMemory reports whether two decoded maps or slices are one.
func sameMemory(a, b any) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

// TestEqualSubtreesAreShared: the items of a list share their equal subtrees (the
// Deployments' strategy, resources and ports), never their own maps (the item, its
// metadata), and stay equal to apimachinery's decoding (checkList).
func TestEqualSubtreesAreShared(t *testing.T) {
	t.Parallel()
	data := deployments.ListJSON(8)
	checkList(t, data, true, true, false)
	l, err := unstructuredjson.List(data, unstructuredjson.Options{DropManagedFields: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := l.Items[1].Object, l.Items[2].Object
	field := func(obj map[string]any, path ...string) any {
		v := any(obj)
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		return v
	}
	for _, path := range [][]string{{"spec", "strategy"}, {"spec", "strategy", "rollingUpdate"}} {
		if !sameMemory(field(a, path...), field(b, path...)) {
			t.Fatalf("%v not shared", path)
		}
	}
	ca := field(a, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	cb := field(b, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if !sameMemory(ca["resources"], cb["resources"]) || !sameMemory(ca["ports"], cb["ports"]) {
		t.Fatal("equal resources or ports not shared")
	}
	if sameMemory(a, b) || sameMemory(a["metadata"], b["metadata"]) || sameMemory(a["spec"], b["spec"]) {
		t.Fatal("an object's own maps shared")
	}
}

// TestSharingKeepsTypes: subtrees that are equal as JSON numbers or as reflect.DeepEqual
// sees floats, but not as Go values (0 and 0.0, 0.0 and -0.0, "0", false, null, [], {}),
// each keep their own, as apimachinery decodes them; so do maps with a repeated key.
func TestSharingKeepsTypes(t *testing.T) {
	t.Parallel()
	var items []string
	for _, v := range []string{`0`, `0.0`, `-0.0`, `-0`, `0.0`, `0`, `"0"`, `false`, `null`, `[]`, `{}`, `[0]`, `[0.0]`, `{"b":-0.0}`, `{"b":0.0}`} {
		items = append(items, `{"v":{"a":`+v+`},"w":[`+v+`]}`)
	}
	items = append(items, `{"v":{"a":1,"a":2}}`, `{"v":{"a":2}}`, `{"v":{"a":2,"a":1}}`, `{"v":{"a":1}}`)
	for _, strip := range []bool{false, true} {
		checkList(t, listOf(items...), strip, true, false)
	}
}
