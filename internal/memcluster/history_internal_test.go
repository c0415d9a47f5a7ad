package memcluster

import (
	"fmt"
	"testing"
)

func TestHistoryKeepsTheLastInOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		max, writes int
		want        string
	}{
		{max: 3, writes: 0, want: "[]"},
		{max: 3, writes: 2, want: "[1 2]"},
		{max: 3, writes: 3, want: "[1 2 3]"},
		{max: 3, writes: 4, want: "[2 3 4]"},
		{max: 3, writes: 10, want: "[8 9 10]"},
		{max: 1, writes: 5, want: "[5]"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.max, "/", tt.writes), func(t *testing.T) {
			t.Parallel()
			h := &history{max: tt.max}
			for rv := 1; rv <= tt.writes; rv++ {
				h.add(event{rv: int64(rv)})
			}
			var got []int64
			h.each(func(ev event) { got = append(got, ev.rv) })
			if fmt.Sprint(got) != tt.want && (tt.want != "[]" || got != nil) {
				t.Fatalf("kept %v, want %s", got, tt.want)
			}
			old, ok := h.oldest()
			if wantOldest := int64(max(1, tt.writes-tt.max+1)); ok != (tt.writes > 0) || (ok && old.rv != wantOldest) {
				t.Fatalf("oldest = %d (%v), want %d", old.rv, ok, wantOldest)
			}
			if cap(h.buf) > 2*tt.max && tt.max > 0 {
				t.Fatalf("ring holds %d slots for %d events", cap(h.buf), tt.max)
			}
		})
	}
}

// A write to a full history allocates nothing: the ring overwrites the oldest event.
func TestHistoryWriteWhenFullAllocatesNothing(t *testing.T) {
	h := &history{max: 1000}
	for rv := range 1000 {
		h.add(event{rv: int64(rv)})
	}
	rv := int64(1000)
	if allocs := testing.AllocsPerRun(1000, func() { rv++; h.add(event{rv: rv}) }); allocs != 0 {
		t.Fatalf("%v allocations per write once full, want 0", allocs)
	}
}
