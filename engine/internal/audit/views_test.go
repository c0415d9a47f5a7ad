package audit

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestSummariesBounded: with 100,000 failing results a summary lists the first few (errors,
// then failures, then warnings, each by key) with the count of the rest, and asking for it
// allocates in proportion to what it lists, not to the results held.
func TestSummariesBounded(t *testing.T) {
	s := NewResults(nil)
	s.StartPass("p.js")
	const n = 100_000
	outcomes := []string{Fail, Pass, Warn, Fail, Error}
	for i := range n {
		r := Result{Script: "p.js", Result: outcomes[i%len(outcomes)], Message: "m", Time: time.Unix(1, 0)}
		s.Set(fmt.Sprintf("v1/configmaps|ns/cm-%06d", n-i), r)
	}
	s.Summaries(5) // warm up
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sums := s.Summaries(5)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<10 {
		t.Errorf("a summary of 5 findings allocated %d bytes over %d results; want under 256 KiB", alloc, n)
	}
	if len(sums) != 1 {
		t.Fatalf("summaries %+v, want p.js's", sums)
	}
	sum := sums[0]
	var keys []string
	for _, f := range sum.Failing {
		keys = append(keys, f.Result.Result+" "+f.Key)
	}
	// i%5 == 4 is an error: keys n-4, n-9, ...; the smallest keys are cm-000001 (i = n-1).
	want := []string{"error v1/configmaps|ns/cm-000001", "error v1/configmaps|ns/cm-000006", "error v1/configmaps|ns/cm-000011",
		"error v1/configmaps|ns/cm-000016", "error v1/configmaps|ns/cm-000021"}
	if !slices.Equal(keys, want) {
		t.Errorf("failing = %q, want %q", keys, want)
	}
	if failing := n * 4 / 5; sum.More != failing-5 {
		t.Errorf("more = %d, want %d", sum.More, failing-5)
	}
	if sum.Counts[Pass] != n/5 || sum.Counts[Error] != n/5 || sum.Counts[Fail] != 2*n/5 {
		t.Errorf("counts = %v", sum.Counts)
	}
	if none := s.Summaries(0); len(none[0].Failing) != 0 || none[0].More != n*4/5 {
		t.Errorf("a summary with limit 0: %d listed, %d more", len(none[0].Failing), none[0].More)
	}
}

// TestProgressFollowsItsPass: a pass's progress shows while it runs, is capped at the objects
// listed, ignores a replaced pass, and goes when the pass is done.
func TestProgressFollowsItsPass(t *testing.T) {
	t.Parallel()
	s := NewResults(nil)
	old := s.StartPass("p.js")
	s.Listed("p.js", old)
	pass := s.StartPass("p.js")
	for range 3 {
		s.Listed("p.js", pass)
	}
	s.Audited("p.js", old) // the replaced pass's Auditor, still finishing a call
	s.Audited("p.js", pass)
	if a, o, ok := s.Progress("p.js"); !ok || a != 1 || o != 3 {
		t.Errorf("progress = %d of %d (%v), want 1 of 3", a, o, ok)
	}
	for range 4 {
		s.Audited("p.js", pass) // a key changed during the pass is audited twice
	}
	if a, o, _ := s.Progress("p.js"); a != 3 || o != 3 {
		t.Errorf("progress = %d of %d, want 3 of 3", a, o)
	}
	s.PassDone("p.js", pass)
	if a, o, ok := s.Progress("p.js"); ok || a != 0 || o != 0 {
		t.Errorf("progress after the pass = %d of %d (%v), want none", a, o, ok)
	}
}

// BenchmarkSummaries is what a connected web page costs the results' lock once a snapshot:
// the summary of one script with 100,000 failing results, 100 listed.
func BenchmarkSummaries(b *testing.B) {
	s := NewResults(nil)
	for i := range 100_000 {
		s.Set(fmt.Sprintf("v1/configmaps|ns/cm-%06d", i), Result{Script: "p.js", Result: Fail, Time: time.Unix(1, 0)})
	}
	for b.Loop() {
		s.Summaries(100)
	}
}
