// Package audit evaluates the validate of scripts that opt into audit (admission.audit) over
// every object of their watch, and keeps the results for the reports (package engine: the
// wiring; writer.go: the openreports.io Report objects).
//
// Goroutines: one Auditor per audit script version, started and joined by its owner (the
// engine's audit set); the Writer's loop, started and joined by the engine's Run. Results is
// safe from any goroutine.
package audit

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// The results of an audit, as openreports.io/v1alpha1 names them.
const (
	Pass  = "pass"
	Fail  = "fail"
	Warn  = "warn"
	Error = "error"
	Skip  = "skip"
)

// Outcomes lists the results in the order of a report's summary.
var Outcomes = []string{Pass, Fail, Warn, Error, Skip}

// Subject is the object a result is about.
type Subject struct {
	APIVersion, Kind, Namespace, Name, UID string
}

// Result is one script's verdict on one object.
type Result struct {
	Script  string
	Subject Subject
	Result  string // Pass, Fail, Warn, Error or Skip
	Message string
	Time    time.Time // when the verdict was first reached; kept while it stays the same
}

// same reports whether r and o say the same thing, their times aside.
func (r Result) same(o Result) bool {
	return r.Script == o.Script && r.Subject == o.Subject && r.Result == o.Result && r.Message == o.Message
}

// Results holds the current result of every (script, object) pair. Safe for concurrent use.
// Each change bumps a sequence number the Writer polls, and calls onChange. Every change costs
// O(1) besides its map updates: the counts by outcome are kept per script as results come
// and go, and each report group (a script's results in one namespace, as Build groups them)
// records the sequence number of its last change, so that the Writer rebuilds only the
// groups changed since it last published (Changed).
type Results struct {
	mu       sync.Mutex
	byScript map[string]map[string]Result // script → object key → result
	counts   map[string]map[string]int    // script → outcome → results (every Outcome listed)
	groups   map[ReportID]*group          // groupOf(script, namespace) → its results and last change
	seq      uint64
	passing  map[string]uint64 // scripts whose Auditor has not finished its initial pass → its pass
	passes   uint64            // the last pass StartPass numbered
	onChange func(script string, counts map[string]int)

	progress map[string]progress // script → how far its latest pass has got (views.go)
}

// group is one report group: the results Build puts in the report (or the split parts) of
// one base ReportID (each with its partHash), the seq of its last change, that of the last
// change of its part count (bucketCount), and which parts changed since the last publish: a
// changed result's partHash → the seq of its last change. An emptied group stays until the
// Writer published past its change (Published), so that its reports are deleted.
type group struct {
	members   map[member]uint32
	seq       uint64
	layoutSeq uint64
	changed   map[uint32]uint64
}

// GroupChange is what changed in a group (Changed): the results of the parts to rebuild
// (sorted by script then object key), the group's part count, and the names of the reports
// of those parts (Parts nil: every part, the group's part count changed).
type GroupChange struct {
	Results []Result
	Buckets int
	Parts   map[string]bool
}

// member names one result: its script and object key.
type member struct{ script, key string }

// NewResults returns an empty store; onChange (may be nil) is told each script's counts after
// they change, under the store's lock: it must not call back.
func NewResults(onChange func(script string, counts map[string]int)) *Results {
	return &Results{byScript: map[string]map[string]Result{}, counts: map[string]map[string]int{},
		groups: map[ReportID]*group{}, passing: map[string]uint64{}, onChange: onChange}
}

// Set records r for the object key; a result saying the same as the one held keeps the held
// one's time, and changes nothing.
func (s *Results) Set(key string, r Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.scriptLocked(r.Script)
	old, ok := m[key]
	if ok && old.same(r) {
		return
	}
	s.seq++
	if ok {
		s.forgetLocked(key, old)
	}
	m[key] = r
	s.counts[r.Script][r.Result]++
	g := s.groupLocked(groupOf(r.Script, r.Subject.Namespace))
	h := partHash(r)
	g.members[member{r.Script, key}] = h
	s.touchLocked(g, h, len(g.members)-1)
	s.notifyLocked(r.Script)
}

// Delete forgets the result of the object key for script.
func (s *Results) Delete(script, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.byScript[script][key]
	if !ok {
		return
	}
	s.seq++
	s.forgetLocked(key, old)
	delete(s.byScript[script], key)
	s.notifyLocked(script)
}

// Retain forgets script's results for the keys keep does not accept: after a new version's
// initial pass, the objects it no longer watches.
func (s *Results) Retain(script string, keep func(key string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byScript[script]
	n := len(m)
	seq := s.seq + 1
	maps.DeleteFunc(m, func(k string, r Result) bool {
		if keep(k) {
			return false
		}
		s.seq = seq
		s.forgetLocked(k, r)
		return true
	})
	if len(m) != n {
		s.notifyLocked(script)
	}
}

// DropScript forgets every result of script: it no longer audits.
func (s *Results) DropScript(script string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.passing, script)
	m, ok := s.byScript[script]
	if !ok {
		return
	}
	s.seq++
	for k, r := range m {
		s.forgetLocked(k, r)
	}
	delete(s.byScript, script)
	s.notifyLocked(script) // zero counts: the gauge's series go
	delete(s.counts, script)
}

// scriptLocked returns script's results, made with its counts when it has none. Called with
// mu held.
func (s *Results) scriptLocked(script string) map[string]Result {
	m := s.byScript[script]
	if m == nil {
		m = map[string]Result{}
		s.byScript[script] = m
		s.counts[script] = zeroCounts()
	}
	return m
}

// forgetLocked takes the result r of key out of its script's counts and its group, marking
// the group changed at s.seq; the caller removes it from byScript. Called with mu held.
func (s *Results) forgetLocked(key string, r Result) {
	s.counts[r.Script][r.Result]--
	if g := s.groups[groupOf(r.Script, r.Subject.Namespace)]; g != nil {
		m := member{r.Script, key}
		if h, ok := g.members[m]; ok {
			delete(g.members, m)
			s.touchLocked(g, h, len(g.members)+1)
		}
	}
}

// touchLocked marks g changed at s.seq, in the part of partHash h, its part count too when
// its size before (n) had another. Called with mu held.
func (s *Results) touchLocked(g *group, h uint32, n int) {
	g.seq = s.seq
	g.changed[h] = s.seq
	if bucketCount(n) != bucketCount(len(g.members)) {
		g.layoutSeq = s.seq
	}
}

func (s *Results) groupLocked(id ReportID) *group {
	g := s.groups[id]
	if g == nil {
		g = &group{members: map[member]uint32{}, changed: map[uint32]uint64{}}
		s.groups[id] = g
	}
	return g
}

// groupOf is the base ReportID of script's results in namespace: the ID of its report, or
// the one its split parts are named after. Scripts whose names map to one report name share
// it, as they share their report.
func groupOf(script, namespace string) ReportID {
	return ReportID{Namespace: namespace, Name: reportName(script, "")}
}

// StartPass records that script's Auditor begins its initial pass and returns the pass's
// number; until PassDone with it the Writer holds back, so that a half-done pass (after a
// restart or a save) never rewrites a report.
func (s *Results) StartPass(script string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes++
	s.passing[script] = s.passes
	s.scriptLocked(script) // listed by Counts from the start
	return s.passes
}

// PassDone records that pass (StartPass's number) of script has audited every object its
// informers held when they synced; a pass a newer one replaced changes nothing.
func (s *Results) PassDone(script string, pass uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.passing[script] == pass {
		delete(s.passing, script)
	}
}

// Passing returns the scripts in their initial pass, sorted.
func (s *Results) Passing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.passing))
}

// notifyLocked tells onChange script's counts (a copy). Called with mu held.
func (s *Results) notifyLocked(script string) {
	if s.onChange != nil {
		c := s.counts[script]
		if c == nil {
			c = zeroCounts()
		}
		s.onChange(script, maps.Clone(c))
	}
}

func zeroCounts() map[string]int {
	counts := make(map[string]int, len(Outcomes))
	for _, o := range Outcomes {
		counts[o] = 0
	}
	return counts
}

// Changed returns, with the sequence number it reflects, what changed in every report group
// after since (a Seq), by the group's base ReportID: the parts holding a result changed since,
// or every part if the group's part count changed since; an emptied group is listed with no
// results. Its cost is in the groups held and the members of those changed, not in every
// result.
func (s *Results) Changed(since uint64) (seq uint64, groups map[ReportID]GroupChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	groups = map[ReportID]GroupChange{}
	for id, g := range s.groups {
		if g.seq <= since {
			continue
		}
		c := GroupChange{Buckets: bucketCount(len(g.members))}
		var dirty map[int]bool // nil: every part
		if g.layoutSeq <= since {
			dirty, c.Parts = map[int]bool{}, map[string]bool{}
			for h, at := range g.changed {
				if at > since {
					i := int(h % uint32(c.Buckets))
					dirty[i] = true
					c.Parts[partName(id.Name, i, c.Buckets)] = true
				}
			}
		}
		var members []member
		for m, h := range g.members {
			if dirty == nil || dirty[int(h%uint32(c.Buckets))] {
				members = append(members, m)
			}
		}
		slices.SortFunc(members, func(a, b member) int {
			return cmp.Or(strings.Compare(a.script, b.script), strings.Compare(a.key, b.key))
		})
		c.Results = make([]Result, 0, len(members))
		for _, m := range members {
			c.Results = append(c.Results, s.byScript[m.script][m.key])
		}
		groups[id] = c
	}
	return s.seq, groups
}

// Published tells that every change up to seq is published: the emptied groups changed no
// later are forgotten, and so are the changes of the others' parts.
func (s *Results) Published(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.groups, func(_ ReportID, g *group) bool { return len(g.members) == 0 && g.seq <= seq })
	for _, g := range s.groups {
		maps.DeleteFunc(g.changed, func(_ uint32, at uint64) bool { return at <= seq })
	}
}

// Snapshot returns every result with the sequence number it reflects, sorted by script then
// object key.
func (s *Results) Snapshot() (seq uint64, all []Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, script := range slices.Sorted(maps.Keys(s.byScript)) {
		m := s.byScript[script]
		for _, k := range slices.Sorted(maps.Keys(m)) {
			all = append(all, m[k])
		}
	}
	return s.seq, all
}

// Seq is the sequence number of the last change.
func (s *Results) Seq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// Script returns script's results by object key (a copy).
func (s *Results) Script(script string) map[string]Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.byScript[script])
}

// Counts returns each auditing script's results counted by outcome.
func (s *Results) Counts() map[string]map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]map[string]int, len(s.counts))
	for script, c := range s.counts {
		out[script] = maps.Clone(c)
	}
	return out
}

// Started reports whether any script has begun an audit pass in this process: until one has,
// the Writer has nothing to write nor to clean up, and does not touch the API server (a runner
// without audit scripts needs no permission on reports).
func (s *Results) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.passes > 0 || s.seq > 0
}
