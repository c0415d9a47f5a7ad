package engine

import (
	"context"
	"log/slog"
	"testing"
)

func TestSuspect(t *testing.T) {
	t.Parallel()
	s := func(bytes ...int64) []memSample {
		out := make([]memSample, len(bytes))
		for i, b := range bytes {
			out[i] = memSample{bytes: b}
		}
		return out
	}
	tests := []struct {
		name    string
		history map[string][]memSample
		want    string
	}{
		{name: "the one growing", history: map[string][]memSample{"leak": s(10, 20, 30), "big": s(90, 90, 90)}, want: "leak"},
		{name: "the largest of two growing", history: map[string][]memSample{"a": s(10, 20, 30), "b": s(20, 40, 60)}, want: "b"},
		{name: "too few samples to say", history: map[string][]memSample{"a": s(10, 60)}},
		{name: "grew, then shrank", history: map[string][]memSample{"a": s(10, 60, 50)}},
		{name: "growing but small", history: map[string][]memSample{"a": s(1, 2, 3)}},
		{name: "too large to measure counts as growing", history: map[string][]memSample{
			"a": {{bytes: 50, truncated: true}}, "b": s(10, 20, 30)}, want: "a"},
		{name: "too large to measure, whatever the walk reached", history: map[string][]memSample{
			"a": {{bytes: 2, truncated: true}}}, want: "a"},
		{name: "nothing", history: map[string][]memSample{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := suspect(tt.history, 5)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("suspect = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

// fakeMeasured is a version whose runtime grows by step at every measurement it is asked for.
type fakeMeasured struct {
	bytes, step int64
	seq         uint64
	requested   int
}

func (f *fakeMeasured) requestMemory() {
	f.requested++
	f.bytes += f.step
	f.seq++
}

func (f *fakeMeasured) memory() (int64, uint64, bool) { return f.bytes, f.seq, false }

// TestMemoryGuardChecks drives the guard's checks with a fake heap: nothing is measured below
// half the limit; above it the versions are measured; above 80 % the growing one is stopped,
// once, and the guard waits before acting again.
func TestMemoryGuardChecks(t *testing.T) {
	t.Parallel()
	const limit = 1000
	leak := &fakeMeasured{bytes: 200, step: 50}
	steady := &fakeMeasured{bytes: 300}
	heap := int64(400)
	var stopped []measured
	g := &memoryGuard{limit: limit, logger: slog.New(slog.DiscardHandler),
		read:    func() heapReading { return heapReading{live: uint64(heap), inUse: uint64(heap)} },
		collect: func() {},
		serving: func() []measured { return []measured{leak, steady} },
		stop:    func(_ context.Context, m measured, _ int64) { stopped = append(stopped, m) },
		history: map[measured][]memSample{}, seqs: map[measured]uint64{}}
	g.check(t.Context())
	if leak.requested != 0 {
		t.Fatalf("measured below half the limit")
	}
	heap = 600
	for range 4 {
		g.check(t.Context())
	}
	if leak.requested != 4 || steady.requested != 4 || len(stopped) != 0 {
		t.Fatalf("above half the limit: requested %d/%d, stopped %d; want 4/4 and none stopped below 80 %%",
			leak.requested, steady.requested, len(stopped))
	}
	heap = 900
	g.check(t.Context())
	if len(stopped) != 1 || stopped[0] != leak {
		t.Fatalf("above 80 %%: stopped %v, want the leaking version only", stopped)
	}
	for range quietChecks {
		g.check(t.Context())
	}
	if len(stopped) != 1 {
		t.Fatalf("acted again during the quiet checks after a stop: %d stops", len(stopped))
	}
}
