package status

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// Live is a version the book holds while it lives: its status is read at each snapshot.
type Live interface {
	Status() VersionStatus
}

// Book records what Status reports of the scripts: the engine's loader writes it at each
// transition, the goroutine that joins a retired version marks it done, and any goroutine
// reads it. It holds live versions only by reference: a version done is kept as a frozen
// VersionStatus, so its memory (cache, runtimes) can go.
type Book struct {
	mu      sync.Mutex
	seq     uint64
	notify  chan struct{} // closed and replaced at every change
	byName  map[string]*scriptRecord
	recent  int // loads kept per script
	maxDone int // done versions kept per script
}

type scriptRecord struct {
	hash    string
	removed bool
	live    []Live
	failed  *VersionStatus // the newest content, which did not load
	waiting bool           // failed on an unknown resource
	stopped *VersionStatus // the content the memory guard stopped
	done    []VersionStatus
	loads   []LoadStatus
	watches []WatchStatus
}

// NewBook returns an empty book.
func NewBook() *Book {
	return &Book{notify: make(chan struct{}), byName: map[string]*scriptRecord{}, recent: 16, maxDone: 2}
}

// touch records a change; called with mu held.
func (b *Book) touch() {
	b.seq++
	close(b.notify)
	b.notify = make(chan struct{})
}

// Bump records a change that is not the book's own (a live version's state, readiness,
// leadership, health).
func (b *Book) Bump() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.touch()
}

// Changed returns a channel closed at the next change.
func (b *Book) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.notify
}

func (b *Book) record(name string) *scriptRecord {
	r := b.byName[name]
	if r == nil {
		r = &scriptRecord{}
		b.byName[name] = r
	}
	return r
}

// Added records v, a new version of script name with content hash, syncing; its content is
// now the newest, and watches its watches.
func (b *Book) Added(name, hash string, v Live, watches []WatchStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(name)
	r.hash, r.removed, r.failed, r.waiting = hash, false, nil, false
	r.live = append(r.live, v)
	r.watches = append(r.watches[:0], watches...)
	b.touch()
}

// Done records that v, a version of script name, is done: its status is frozen and the book
// lets go of it.
func (b *Book) Done(name string, v Live) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := b.byName[name]; r != nil {
		if i := slices.Index(r.live, v); i >= 0 {
			r.live = slices.Delete(r.live, i, i+1)
			r.done = append(r.done, v.Status())
			if len(r.done) > b.maxDone {
				r.done = r.done[len(r.done)-b.maxDone:]
			}
		}
		if r.removed && len(r.live) == 0 {
			delete(b.byName, name)
		}
	}
	b.touch()
}

// Loaded records a load's outcome; At is set here.
func (b *Book) Loaded(name string, ls LoadStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.loaded(name, ls)
}

// Serving runs serve, which makes a live version of script name current, and records its
// load's outcome ls in one step: no snapshot shows the version current without its load's
// entry, or the entry before the version serves. serve must not call back into the book.
func (b *Book) Serving(name string, ls LoadStatus, serve func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	serve()
	b.loaded(name, ls)
}

// loaded adds ls to name's loads; called with mu held.
func (b *Book) loaded(name string, ls LoadStatus) {
	r := b.record(name)
	ls.At = time.Now()
	r.loads = append(r.loads, ls)
	if len(r.loads) > b.recent {
		r.loads = r.loads[len(r.loads)-b.recent:]
	}
	b.touch()
}

// Failed records a content that did not load, because of err; waiting: it failed on a
// resource the server does not serve (yet), and is retried.
func (b *Book) Failed(name, hash string, started time.Time, err *ErrorStatus, waiting bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(name)
	r.hash, r.removed = hash, false
	r.failed = &VersionStatus{Hash: hash, State: VersionFailed, Started: started, Error: err}
	r.waiting = waiting
	b.touch()
}

// Restored records that the content of the version serving script name, hash, was saved
// back after a content that did not load: it is the newest again, and the failure is over.
func (b *Book) Restored(name, hash string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(name)
	r.hash, r.failed, r.waiting = hash, nil, false
	b.touch()
}

// Stopped records the content the memory guard stopped, or clears it (hash "").
func (b *Book) Stopped(name, hash string, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.byName[name]
	if r == nil && hash == "" {
		return
	}
	r = b.record(name)
	r.stopped = nil
	if hash != "" {
		r.stopped = &VersionStatus{Hash: hash, State: VersionStopped, Started: time.Now(), MemoryBytes: bytes}
	}
	b.touch()
}

// Removed records that the file is gone: the script leaves the book once its versions are
// done.
func (b *Book) Removed(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.byName[name]
	if r == nil {
		return
	}
	r.removed, r.failed, r.stopped = true, nil, nil
	if len(r.live) == 0 {
		delete(b.byName, name)
	}
	b.touch()
}

// Scripts is the book's part of Status, with each script's handler counters from counts, and
// the sequence number of the last change.
func (b *Book) Scripts(counts func(script string) map[string]HandlerCounts) (uint64, []ScriptStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ScriptStatus, 0, len(b.byName))
	for name, r := range b.byName {
		out = append(out, r.status(name, counts(name)))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return b.seq, out
}

func (r *scriptRecord) status(name string, handlers map[string]HandlerCounts) ScriptStatus {
	s := ScriptStatus{Name: name, Hash: r.hash, Handlers: handlers,
		Loads: slices.Clone(r.loads), Watches: slices.Clone(r.watches)}
	for _, v := range r.live {
		s.Versions = append(s.Versions, v.Status())
	}
	for _, extra := range []*VersionStatus{r.failed, r.stopped} {
		if extra != nil {
			s.Versions = append(s.Versions, *extra)
		}
	}
	s.Versions = append(s.Versions, r.done...)
	s.State = r.state(s.Versions)
	return s
}

func (r *scriptRecord) state(versions []VersionStatus) ScriptState {
	serving, syncing := false, false
	for _, v := range versions {
		serving = serving || v.State == VersionCurrent
		syncing = syncing || v.State == VersionSyncing
	}
	switch {
	case r.removed:
		return ScriptUnloaded
	case serving:
		return ScriptServing
	case r.stopped != nil:
		return ScriptStopped
	case r.failed != nil && r.waiting:
		return ScriptWaiting
	case r.failed != nil:
		return ScriptFailed
	case syncing:
		return ScriptSyncing
	}
	return ScriptFailed
}
