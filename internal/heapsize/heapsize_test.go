package heapsize_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/internal/heapsize"
)

// node is 64 bytes: a pointer and padding.
type node struct {
	next *node
	_    [56]byte
}

type shared struct{ big []byte }

type holder struct {
	a, b  *shared
	other *foreign
	hide  []byte
	any   any
}

// foreign stands for memory the measured graph shares with the rest of the process.
type foreign struct{ big []byte }

func list(n int) *node {
	var head *node
	for range n {
		head = &node{next: head}
	}
	return head
}

func followAllBut(names ...string) func(reflect.Type) bool {
	return func(t reflect.Type) bool {
		for _, n := range names {
			if t.Name() == n {
				return false
			}
		}
		return true
	}
}

func TestMeasure(t *testing.T) {
	t.Parallel()
	mb := 1 << 20
	one := &shared{big: make([]byte, mb)}
	cyclic := list(3)
	cyclic.next.next.next = cyclic
	tests := []struct {
		name      string
		root      any
		cfg       heapsize.Config
		min, max  int64
		truncated bool
	}{
		{name: "a slice counts its capacity", root: &shared{big: make([]byte, 10, mb)}, min: int64(mb), max: int64(mb) + 64},
		{name: "memory reached twice counts once", root: &holder{a: one, b: one}, min: int64(mb), max: int64(mb) + 256},
		{name: "a cycle ends", root: cyclic, min: 3 * 64, max: 3 * 64},
		{name: "a long list costs no goroutine stack", root: list(200_000), min: 200_000 * 64, max: 200_000 * 64},
		{name: "a type not followed counts only its pointer", root: &holder{other: &foreign{big: make([]byte, mb)}},
			cfg: heapsize.Config{Follow: followAllBut("foreign")}, max: 256},
		{name: "a skipped field is not read", root: &holder{hide: make([]byte, mb)},
			cfg: heapsize.Config{Skip: func(_ reflect.Type, f reflect.StructField) bool { return f.Name == "hide" }}, max: 256},
		{name: "a boxed value and a long string", root: &holder{any: strings.Repeat("x", mb)}, min: int64(mb), max: int64(mb) + 256},
		{name: "map entries and their values", root: map[string][]byte{"a": make([]byte, mb), "b": make([]byte, mb)}, min: 2 * int64(mb), max: 2*int64(mb) + 512},
		{name: "the budget truncates", root: list(1000), cfg: heapsize.Config{MaxObjects: 10}, min: 10 * 64, max: 10 * 64, truncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := heapsize.Measure(tt.root, tt.cfg)
			if got.Bytes < tt.min || got.Bytes > tt.max || got.Truncated != tt.truncated {
				t.Fatalf("Measure = %+v, want bytes in [%d, %d] and truncated %v", got, tt.min, tt.max, tt.truncated)
			}
		})
	}
}
