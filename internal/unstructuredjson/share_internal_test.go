package unstructuredjson

import (
	"math"
	"testing"
)

// TestSameIsExact: the comparison that guards every shared subtree tells apart what the
// reference's decoding tells apart, whatever the hashes say.
func TestSameIsExact(t *testing.T) {
	t.Parallel()
	negZero := math.Copysign(0, -1)
	m := map[string]any{"a": int64(1)}
	a := []any{"x"}
	cases := []struct {
		a, b any
		want bool
	}{
		{"0", "0", true},
		{int64(0), int64(0), true},
		{0.0, 0.0, true},
		{0.0, negZero, false},
		{int64(0), 0.0, false},
		{0.0, int64(0), false},
		{"0", int64(0), false},
		{false, false, true},
		{false, nil, false},
		{nil, nil, true},
		{nil, false, false},
		{map[string]any{}, map[string]any{}, true},
		{map[string]any{}, []any{}, false},
		{[]any{}, []any{}, true},
		{m, m, true},
		{m, map[string]any{"a": int64(1)}, true},
		{m, map[string]any{"a": 1.0}, false},
		{m, map[string]any{"b": int64(1)}, false},
		{m, map[string]any{"a": int64(1), "b": nil}, false},
		{a, a, true},
		{a, []any{"x"}, true},
		{a, []any{"y"}, false},
		{[]any{0.0}, []any{negZero}, false},
		{[]any{m}, []any{map[string]any{"a": int64(1)}}, true},
		{[]any{m}, []any{map[string]any{"a": int64(2)}}, false},
		{int32(1), int32(1), false}, // not a decoded type: never shared
	}
	for _, c := range cases {
		if got := same(c.a, c.b); got != c.want {
			t.Errorf("same(%#v, %#v) = %t", c.a, c.b, got)
		}
	}
}

// TestSharedLookupChecksContent: a slot with the right hash but other content is not
// returned, for maps and arrays.
func TestSharedLookupChecksContent(t *testing.T) {
	t.Parallel()
	d := &decoder{shares: new(shareTable)} // not the pool's: its table is planted here
	const h = 12345
	d.share(h, map[string]any{"a": 0.0})
	if _, ok := d.sharedMap([]pair{{"a", math.Copysign(0, -1)}}, h); ok {
		t.Fatal("a map with -0.0 matched one with 0.0")
	}
	if _, ok := d.sharedMap([]pair{{"a", 0.0}, {"a", 0.0}}, h); ok {
		t.Fatal("two members matched a map of one")
	}
	if m, ok := d.sharedMap([]pair{{"a", 0.0}}, h); !ok || len(m) != 1 {
		t.Fatal("the equal map was not found")
	}
	if _, ok := d.sharedMap([]pair{{"a", 0.0}}, h+shareSlots); ok {
		t.Fatal("another hash in the same slot matched")
	}
	d.share(h, []any{int64(1)})
	if _, ok := d.sharedMap([]pair{{"a", 0.0}}, h); ok {
		t.Fatal("an array matched a map")
	}
	if _, ok := d.sharedArray([]any{1.0}, h); ok {
		t.Fatal("[1.0] matched [1]")
	}
	if a, ok := d.sharedArray([]any{int64(1)}, h); !ok || len(a) != 1 {
		t.Fatal("the equal array was not found")
	}
}
