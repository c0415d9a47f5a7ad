package unstructuredjson_test

import (
	"testing"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// TestKeepDropsItems: with Keep, List and ReadList (read in chunks of every size) give the
// list without the refused items, and ask about each item once.
func TestKeepDropsItems(t *testing.T) {
	t.Parallel()
	data := deployments.ListJSON(30)
	all, err := unstructuredjson.List(data, unstructuredjson.Options{DropManagedFields: true})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	odd := func(obj map[string]any) bool {
		name, _ := obj["metadata"].(map[string]any)["name"].(string)
		return len(name)%2 == 1
	}
	want := all.DeepCopy()
	want.Items = want.Items[:0]
	for _, item := range all.Items {
		if odd(item.Object) {
			want.Items = append(want.Items, item)
		}
	}
	if len(want.Items) == 0 || len(want.Items) == len(all.Items) {
		t.Fatalf("the test's filter keeps %d of %d items; it must keep some and drop some", len(want.Items), len(all.Items))
	}
	for name, r := range readers {
		asked := 0
		opts := unstructuredjson.Options{DropManagedFields: true, Keep: func(obj map[string]any) bool { asked++; return odd(obj) }}
		got, err := unstructuredjson.ReadList(r(data), opts)
		if err != nil {
			t.Fatalf("%s: ReadList: %v", name, err)
		}
		mustNotDiff(t, diffList(got, want))
		if asked != len(all.Items) {
			t.Errorf("%s: Keep asked %d times for %d items", name, asked, len(all.Items))
		}
	}
	got, err := unstructuredjson.List(data, unstructuredjson.Options{DropManagedFields: true, Keep: odd})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	mustNotDiff(t, diffList(got, want))
}
