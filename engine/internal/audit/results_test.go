package audit

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"
)

// recount is the counts of script's results counted one by one, as the store kept them before
// it counted incrementally.
func recount(s *Results, script string) map[string]int {
	c := zeroCounts()
	for _, r := range s.Script(script) {
		c[r.Result]++
	}
	return c
}

// TestResultsCountsFollowChanges: after random sets, deletes, retains and drops, the counts
// the store reports and the last counts onChange was told equal a recount of its results.
func TestResultsCountsFollowChanges(t *testing.T) {
	t.Parallel()
	told := map[string]map[string]int{}
	s := NewResults(func(script string, counts map[string]int) { told[script] = counts })
	rng := rand.New(rand.NewPCG(1, 2))
	scripts := []string{"a.js", "b.js"}
	for i := range 5000 {
		script := scripts[rng.IntN(2)]
		key := fmt.Sprintf("v1/configmaps|ns%d/cm-%d", rng.IntN(3), rng.IntN(200))
		switch op := rng.IntN(100); {
		case op < 80:
			s.Set(key, Result{Script: script, Subject: Subject{Namespace: key[15:18], Name: key}, Result: Outcomes[rng.IntN(len(Outcomes))]})
		case op < 97:
			s.Delete(script, key)
		case op < 99:
			s.Retain(script, func(k string) bool { return len(k)%2 == 0 })
		default:
			s.DropScript(script)
		}
		if i%97 != 0 {
			continue
		}
		counts := s.Counts()
		for _, script := range scripts {
			want := recount(s, script)
			if got := counts[script]; got != nil && !maps.Equal(got, want) {
				t.Fatalf("step %d: %s counts %v, recount %v", i, script, got, want)
			}
			if got := told[script]; got != nil && !maps.Equal(got, want) {
				t.Fatalf("step %d: %s told %v, recount %v", i, script, got, want)
			}
		}
	}
}

// TestChangedGroups: Changed lists the groups (script, namespace) changed since a seq with all
// their results, an emptied group with none, and Published forgets the emptied ones.
func TestChangedGroups(t *testing.T) {
	t.Parallel()
	s := NewResults(nil)
	set := func(script, ns, name, result string) {
		s.Set("v1/configmaps|"+ns+"/"+name, Result{Script: script, Subject: Subject{Namespace: ns, Name: name}, Result: result})
	}
	set("a.js", "x", "1", Pass)
	set("a.js", "y", "1", Pass)
	set("b.js", "x", "1", Fail)
	since := s.Seq()
	set("a.js", "x", "2", Fail)
	set("a.js", "y", "1", Pass) // the same: no change
	s.Delete("b.js", "v1/configmaps|x/1")
	_, groups := s.Changed(since)
	if len(groups) != 2 || len(groups[groupOf("a.js", "x")].Results) != 2 || len(groups[groupOf("b.js", "x")].Results) != 0 {
		t.Fatalf("changed since %d: %v; want a.js/x with 2 results and b.js/x emptied", since, groups)
	}
	if rs := groups[groupOf("a.js", "x")].Results; rs[0].Subject.Name != "1" || rs[1].Subject.Name != "2" {
		t.Errorf("a.js/x results %v, want sorted by key", rs)
	}
	seq, all := s.Changed(0)
	if len(all) != 3 {
		t.Errorf("changed since 0: %d groups, want 3", len(all))
	}
	s.Published(seq)
	if _, all := s.Changed(0); len(all) != 2 {
		t.Errorf("after Published: %d groups, want 2 (b.js/x forgotten)", len(all))
	}
}

// TestChangedParts: in a group split into parts, one changed result lists its part alone;
// a change of the part count lists every part.
func TestChangedParts(t *testing.T) {
	t.Parallel()
	s := NewResults(nil)
	fill(s, []string{"a.js"}, 1, 1200, Pass) // 8 parts
	since := s.Seq()
	r := Result{Script: "a.js", Result: Fail, Subject: Subject{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns-0", Name: "d-7", UID: "0-7"}}
	s.Set("apps/v1/deployments|ns-0/d-7", r)
	_, groups := s.Changed(since)
	c := groups[groupOf("a.js", "ns-0")]
	part := partName("jsinformer-a-js", int(partHash(r)%8), 8)
	if c.Buckets != 8 || len(c.Parts) != 1 || !c.Parts[part] {
		t.Fatalf("one result changed: %d parts, %v rebuilt; want 8, [%s]", c.Buckets, c.Parts, part)
	}
	for _, got := range c.Results {
		if partHash(got)%8 != partHash(r)%8 {
			t.Fatalf("result %s of another part listed", got.Subject.Name)
		}
	}
	if n := len(c.Results); n == 0 || n >= 1200 {
		t.Errorf("%d results of the changed part listed, want those of its part alone", n)
	}
	for i := range 700 { // 500 left: one part
		s.Delete("a.js", fmt.Sprintf("apps/v1/deployments|ns-0/d-%d", 1199-i))
	}
	_, groups = s.Changed(since)
	if c := groups[groupOf("a.js", "ns-0")]; c.Buckets != 1 || c.Parts != nil || len(c.Results) != 500 {
		t.Errorf("part count changed: %d parts, %v, %d results; want 1, every part, 500", c.Buckets, c.Parts, len(c.Results))
	}
}

// BenchmarkResultsRecord records 20,000 results of one script with and without an onChange
// callback (the audit gauge's). Before counts were kept incrementally, each change recounted
// the script's results: 19.7 s with the callback against 20 ms without.
func BenchmarkResultsRecord(b *testing.B) {
	const n = 20_000
	record := func(onChange func(string, map[string]int)) time.Duration {
		s := NewResults(onChange)
		start := time.Now()
		for i := range n {
			s.Set(fmt.Sprintf("apps/v1/deployments|ns-%d/d-%d", i%100, i), Result{Script: "p.js",
				Subject: Subject{Namespace: fmt.Sprintf("ns-%d", i%100)}, Result: Outcomes[i%2]})
		}
		return time.Since(start)
	}
	var with, without time.Duration
	for b.Loop() {
		without += record(nil)
		with += record(func(string, map[string]int) {})
	}
	b.ReportMetric(float64(with.Milliseconds())/float64(b.N), "ms-with-callback")
	b.ReportMetric(float64(without.Milliseconds())/float64(b.N), "ms-without")
	b.ReportMetric(float64(with)/float64(without), "ratio-with/without")
}
