package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
)

// hashContent is the script version: the first 12 hex digits of the SHA-256.
func hashContent(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:12]
}

var emptyHash = hashContent(nil)

// state is what Run has emitted so far; only Run's goroutine touches it.
type state struct {
	hashes map[string]string // name -> hash of the last Loaded event
	// waiting holds names whose file became empty after having content: most
	// likely a truncate whose write has not landed yet. They get one more
	// quiet period before the empty content is emitted.
	waiting map[string]bool
}

func newState() *state {
	return &state{hashes: map[string]string{}, waiting: map[string]bool{}}
}

// apply diffs a scan against the emitted state, records the result and
// returns the events to emit: Removed events first, then Loaded, each sorted
// by Name. Names in kept, or under a "folder/" in kept, exist but could not be
// read: they are not removed. retry is true when a file was held back as
// possibly half-written, so the caller must rescan after another quiet period
// even without events.
func (s *state) apply(snap map[string]Source, kept []string) (events []Event, retry bool) {
	for _, name := range slices.Sorted(maps.Keys(s.hashes)) {
		if _, ok := snap[name]; !ok && !isKept(name, kept) {
			delete(s.hashes, name)
			delete(s.waiting, name)
			events = append(events, Event{Kind: Removed, Source: Source{Name: name}})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(snap)) {
		ev, hold := s.update(snap[name])
		retry = retry || hold
		if ev != nil {
			events = append(events, *ev)
		}
	}
	return events, retry
}

func isKept(name string, kept []string) bool {
	for _, k := range kept {
		if name == k || name+"/" == k || strings.HasSuffix(k, "/") && strings.HasPrefix(name, k) {
			return true
		}
	}
	return false
}

// update handles one present file; hold reports that it was held back.
func (s *state) update(src Source) (ev *Event, hold bool) {
	prev, known := s.hashes[src.Name]
	if known && prev == src.Hash {
		delete(s.waiting, src.Name)
		return nil, false
	}
	if known && prev != emptyHash && len(src.Content) == 0 && !s.waiting[src.Name] {
		s.waiting[src.Name] = true
		return nil, true
	}
	delete(s.waiting, src.Name)
	s.hashes[src.Name] = src.Hash
	return &Event{Kind: Loaded, Source: src}, false
}
