package audit

import (
	"cmp"
	"container/heap"
	"maps"
	"slices"
	"strings"
)

// The views of the results for people: one object's results (runner explain), each script's
// summary with its first failing objects (the web page's policies view), and the progress of
// an initial pass (runner status).

// progress is how far a pass has got: objects its informers listed at registration, and keys
// audited since it started.
type progress struct {
	pass             uint64
	audited, objects int
}

// Listed counts one object of the initial lists of script's pass.
func (s *Results) Listed(script string, pass uint64) {
	s.bump(script, pass, func(p *progress) { p.objects++ })
}

// Audited counts one key audited during script's pass.
func (s *Results) Audited(script string, pass uint64) {
	s.bump(script, pass, func(p *progress) { p.audited++ })
}

func (s *Results) bump(script string, pass uint64, f func(*progress)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.passing[script] != pass {
		return // done, or replaced by a newer pass
	}
	if s.progress == nil {
		s.progress = map[string]progress{}
	}
	p := s.progress[script]
	if p.pass != pass {
		p = progress{pass: pass}
	}
	f(&p)
	s.progress[script] = p
}

// Progress reports how far script's initial pass has got: keys audited (at most objects)
// and objects its watch listed so far; ok is false when it is in no initial pass.
func (s *Results) Progress(script string) (audited, objects int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.progressOf(script)
}

func (s *Results) progressOf(script string) (audited, objects int, ok bool) {
	pass, passing := s.passing[script]
	if !passing {
		return 0, 0, false
	}
	p := s.progress[script]
	if p.pass != pass {
		return 0, 0, true
	}
	return min(p.audited, p.objects), p.objects, true
}

// Object returns each script's result for the object key ("RESOURCE|ns/name"), sorted by
// script.
func (s *Results) Object(key string) []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Result
	for _, script := range slices.Sorted(maps.Keys(s.byScript)) {
		if r, ok := s.byScript[script][key]; ok {
			out = append(out, r)
		}
	}
	return out
}

// Finding is one result that is not a pass, with its object key.
type Finding struct {
	Key string
	Result
}

// Summary is one script's counts, initial pass progress, and first findings.
type Summary struct {
	Script           string
	Counts           map[string]int
	InitialPass      bool
	Audited, Objects int
	// Failing are at most the limit asked for of the error, fail and warn results, in that
	// order, then by key; More is how many more there are.
	Failing []Finding
	More    int
}

// failRank orders findings: errors first, then failures, then warnings; -1 for the others.
func failRank(result string) int {
	switch result {
	case Error:
		return 0
	case Fail:
		return 1
	case Warn:
		return 2
	}
	return -1
}

// Summaries returns every auditing script's summary, sorted by script, each listing at most
// limit findings. Its cost is linear in the results held and its memory in limit: the
// findings are chosen with a bounded heap, never by copying or sorting all of them.
func (s *Results) Summaries(limit int) []Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Summary, 0, len(s.byScript))
	for _, script := range slices.Sorted(maps.Keys(s.byScript)) {
		m := s.byScript[script]
		sum := Summary{Script: script, Counts: maps.Clone(s.counts[script])}
		sum.Audited, sum.Objects, sum.InitialPass = s.progressOf(script)
		top := findingHeap{}
		failing := 0
		for k, r := range m {
			rank := failRank(r.Result)
			if rank < 0 {
				continue
			}
			failing++
			switch {
			case len(top) < limit:
				heap.Push(&top, Finding{Key: k, Result: r})
			case limit > 0 && rankedLess(rank, k, failRank(top[0].Result.Result), top[0].Key):
				top[0] = Finding{Key: k, Result: r}
				heap.Fix(&top, 0)
			}
		}
		sum.Failing = slices.SortedFunc(slices.Values(top), func(a, b Finding) int {
			return cmp.Or(cmp.Compare(failRank(a.Result.Result), failRank(b.Result.Result)), strings.Compare(a.Key, b.Key))
		})
		sum.More = failing - len(sum.Failing)
		out = append(out, sum)
	}
	return out
}

func findingLess(a, b Finding) bool {
	return rankedLess(failRank(a.Result.Result), a.Key, failRank(b.Result.Result), b.Key)
}

func rankedLess(ra int, ka string, rb int, kb string) bool {
	if ra != rb {
		return ra < rb
	}
	return ka < kb
}

// findingHeap is a max-heap of findings: the one that sorts last on top, the first to go.
type findingHeap []Finding

func (h findingHeap) Len() int           { return len(h) }
func (h findingHeap) Less(i, j int) bool { return findingLess(h[j], h[i]) }
func (h findingHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *findingHeap) Push(x any)        { *h = append(*h, x.(Finding)) }
func (h *findingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
