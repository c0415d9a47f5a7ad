// Package audit evaluates the validate of scripts that opt into audit (admission.audit) over
// every object of their watch, and keeps the results for the reports (package engine: the
// wiring; writer.go: the openreports.io Report objects).
//
// Goroutines: one Auditor per audit script version, started and joined by its owner (the
// engine's audit set); the Writer's loop, started and joined by the engine's Run. Results is
// safe from any goroutine.
package audit

import (
	"maps"
	"slices"
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
// Each change bumps a sequence number the Writer polls, and calls onChange.
type Results struct {
	mu       sync.Mutex
	byScript map[string]map[string]Result // script → object key → result
	seq      uint64
	passing  map[string]uint64 // scripts whose Auditor has not finished its initial pass → its pass
	passes   uint64            // the last pass StartPass numbered
	onChange func(script string, counts map[string]int)

	progress map[string]progress // script → how far its latest pass has got (views.go)
}

// NewResults returns an empty store; onChange (may be nil) is told each script's counts after
// they change, under the store's lock: it must not call back.
func NewResults(onChange func(script string, counts map[string]int)) *Results {
	return &Results{byScript: map[string]map[string]Result{}, passing: map[string]uint64{}, onChange: onChange}
}

// Set records r for the object key; a result saying the same as the one held keeps the held
// one's time, and changes nothing.
func (s *Results) Set(key string, r Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byScript[r.Script]
	if m == nil {
		m = map[string]Result{}
		s.byScript[r.Script] = m
	}
	if old, ok := m[key]; ok && old.same(r) {
		return
	}
	m[key] = r
	s.changed(r.Script)
}

// Delete forgets the result of the object key for script.
func (s *Results) Delete(script, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byScript[script][key]; !ok {
		return
	}
	delete(s.byScript[script], key)
	s.changed(script)
}

// Retain forgets script's results for the keys keep does not accept: after a new version's
// initial pass, the objects it no longer watches.
func (s *Results) Retain(script string, keep func(key string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.byScript[script])
	maps.DeleteFunc(s.byScript[script], func(k string, _ Result) bool { return !keep(k) })
	if len(s.byScript[script]) != n {
		s.changed(script)
	}
}

// DropScript forgets every result of script: it no longer audits.
func (s *Results) DropScript(script string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.passing, script)
	if _, ok := s.byScript[script]; !ok {
		return
	}
	delete(s.byScript, script)
	s.changed(script)
}

// StartPass records that script's Auditor begins its initial pass and returns the pass's
// number; until PassDone with it the Writer holds back, so that a half-done pass (after a
// restart or a save) never rewrites a report.
func (s *Results) StartPass(script string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes++
	s.passing[script] = s.passes
	if s.byScript[script] == nil {
		s.byScript[script] = map[string]Result{} // listed by Counts from the start
	}
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

func (s *Results) changed(script string) {
	s.seq++
	if s.onChange != nil {
		s.onChange(script, countsOf(s.byScript[script]))
	}
}

func countsOf(m map[string]Result) map[string]int {
	counts := make(map[string]int, len(Outcomes))
	for _, o := range Outcomes {
		counts[o] = 0
	}
	for _, r := range m {
		counts[r.Result]++
	}
	return counts
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
	out := make(map[string]map[string]int, len(s.byScript))
	for script, m := range s.byScript {
		out[script] = countsOf(m)
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
