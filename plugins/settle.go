package plugins

import (
	"maps"
	"slices"
	"time"
)

// DefaultGrace is the grace period used when Options.Grace is not set: how long a script must
// stay unchanged after a change before its Settled event says so.
const DefaultGrace = 500 * time.Millisecond

// settler follows the Loaded events emitted after the initial scan (Source.Settling) until
// their content has stayed unchanged for the grace period, then emits Settled for them. A
// writer that stalls longer than the debounce in the middle of a save (an fsync on a busy
// disk, a network filesystem, vim's backupcopy=yes) makes the rescan read a half-written file;
// its Loaded event is superseded by the next one, and only content that outlives the grace
// period is ever Settled, so the engine reports load errors of that content only. It belongs
// to Run's goroutine.
type settler struct {
	grace     time.Duration
	readFile  func(string) ([]byte, error)
	timer     *time.Timer // due at the earliest deadline; stopped while nothing is followed
	following map[string]settling
}

// settling is one followed plugin version.
type settling struct {
	hash string // the version emitted
	// files are the paths of the plugin and of its modules found by the scan, with the
	// content hash the scan read: what must not have changed for the version to be Settled.
	files    map[string]string
	deadline time.Time
}

func newSettler(grace time.Duration, readFile func(string) ([]byte, error)) *settler {
	t := time.NewTimer(grace)
	t.Stop()
	return &settler{grace: grace, readFile: readFile, timer: t, following: map[string]settling{}}
}

// follow marks the Loaded events among events as Settling and follows them from now; a
// Removed or Loaded event ends the following of the version emitted before for that name.
// files is the scan the events come from, by Name.
func (s *settler) follow(events []Event, files map[string]Source, now time.Time) {
	for i := range events {
		ev := &events[i]
		delete(s.following, ev.Source.Name)
		if ev.Kind != Loaded {
			continue
		}
		ev.Source.Settling = true
		paths := map[string]string{ev.Source.Path: files[ev.Source.Name].Hash}
		for _, m := range ev.Source.Modules {
			if f, ok := files[m]; ok { // a script module; node_modules and JSON change through events only
				paths[f.Path] = f.Hash
			}
		}
		s.following[ev.Source.Name] = settling{hash: ev.Source.Hash, files: paths, deadline: now.Add(s.grace)}
	}
	s.arm(now)
}

// due returns a Settled event for every followed version whose deadline has passed and whose
// files still hold what the scan read, sorted by Name. A file that differs now was written
// after the scan and before the rescan its event will cause: changed is true, and the version
// is followed for another grace period (a rescan supersedes it if its content differs). A file
// that cannot be read counts as unchanged: the rescan reports it.
func (s *settler) due(now time.Time) (events []Event, changed bool) {
	for _, name := range slices.Sorted(maps.Keys(s.following)) {
		f := s.following[name]
		if now.Before(f.deadline) {
			continue
		}
		if s.changedOnDisk(f.files) {
			f.deadline = now.Add(s.grace)
			s.following[name] = f
			changed = true
			continue
		}
		delete(s.following, name)
		events = append(events, Event{Kind: Settled, Source: Source{Name: name, Hash: f.hash}})
	}
	s.arm(now)
	return events, changed
}

func (s *settler) changedOnDisk(files map[string]string) bool {
	for path, hash := range files {
		if content, err := s.readFile(path); err == nil && hashContent(content) != hash {
			return true
		}
	}
	return false
}

// arm sets the timer to the earliest deadline, or stops it when nothing is followed.
func (s *settler) arm(now time.Time) {
	if len(s.following) == 0 {
		s.timer.Stop()
		return
	}
	first := time.Time{}
	for _, f := range s.following {
		if first.IsZero() || f.deadline.Before(first) {
			first = f.deadline
		}
	}
	s.timer.Reset(max(first.Sub(now), 0))
}

// fired ticks when a deadline may have passed.
func (s *settler) fired() <-chan time.Time { return s.timer.C }

func (s *settler) stop() { s.timer.Stop() }
