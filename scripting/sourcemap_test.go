package scripting

import (
	"strings"
	"testing"
)

func TestVLQRoundTrip(t *testing.T) {
	t.Parallel()
	for _, seg := range []string{"AAAA", "SAAQ", "gBAAgB", "+/B", "AACA,EAAE", "2BAAqjBC"} {
		for _, part := range strings.Split(seg, ",") {
			fields, err := decodeSegment(part)
			if err != nil {
				t.Fatalf("decode %q: %v", part, err)
			}
			if got := encodeSegment(fields); got != part {
				t.Errorf("encode(decode(%q)) = %q (fields %v)", part, got, fields)
			}
		}
	}
	for _, bad := range []string{"g", "!A"} {
		if _, err := decodeSegment(bad); err == nil {
			t.Errorf("decode %q: want error", bad)
		}
	}
}

func TestJSVisibleStackPositions(t *testing.T) {
	t.Parallel()
	src := "export default {\n  onAdd() {\n    try { null.x } catch (e) { globalThis.out = e.stack }\n  }\n}\n"
	s := newTestScript(t, "st.js", src, Options{})
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	// 1-based like goja's unmapped positions; the trailing (3) is goja's program counter.
	if got, want := outJSON(t, s), `"TypeError: Cannot read property 'x' of undefined\n\tat onAdd (st.js:3:16(3))\n"`; got != want {
		t.Errorf("e.stack = %s, want %s", got, want)
	}
}
