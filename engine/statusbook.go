package engine

import (
	"errors"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jsinformer/jsinformer/dynamicinformer"
)

// statusBook records what Status reports of the scripts: the loader writes it at each
// transition, the goroutine that joins a retired version marks it done, and any goroutine
// reads it. It holds live versions only by pointer: a version done is kept as a frozen
// VersionStatus, so its memory (cache, runtimes) can go.
type statusBook struct {
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
	live    []*version
	failed  *VersionStatus // the newest content, which did not load
	waiting bool           // failed on an unknown resource
	stopped *VersionStatus // the content the memory guard stopped
	done    []VersionStatus
	loads   []LoadStatus
	watches []WatchStatus
}

func newStatusBook() *statusBook {
	return &statusBook{notify: make(chan struct{}), byName: map[string]*scriptRecord{}, recent: 16, maxDone: 2}
}

// touch records a change; called with mu held.
func (b *statusBook) touch() {
	b.seq++
	close(b.notify)
	b.notify = make(chan struct{})
}

// bump records a change that is not the book's own (readiness, leadership, health).
func (b *statusBook) bump() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.touch()
}

func (b *statusBook) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.notify
}

func (b *statusBook) record(name string) *scriptRecord {
	r := b.byName[name]
	if r == nil {
		r = &scriptRecord{}
		b.byName[name] = r
	}
	return r
}

// added records a new version, syncing; its content is now the newest.
func (b *statusBook) added(v *version, keys []dynamicinformer.Key) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(v.name)
	r.hash, r.removed, r.failed, r.waiting = v.hash, false, nil, false
	r.live = append(r.live, v)
	r.watches = r.watches[:0]
	for _, k := range keys {
		r.watches = append(r.watches, watchOf(k))
	}
	b.touch()
}

// moved records v's new state; done freezes it.
func (b *statusBook) moved(v *version, s versionState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := b.byName[v.name]; r != nil && s == stateDone {
		if i := slices.Index(r.live, v); i >= 0 {
			r.live = slices.Delete(r.live, i, i+1)
			r.done = append(r.done, v.status())
			if len(r.done) > b.maxDone {
				r.done = r.done[len(r.done)-b.maxDone:]
			}
		}
		if r.removed && len(r.live) == 0 {
			delete(b.byName, v.name)
		}
	}
	b.touch()
}

// loaded records a load's outcome.
func (b *statusBook) loaded(name string, ls LoadStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(name)
	ls.At = time.Now()
	r.loads = append(r.loads, ls)
	if len(r.loads) > b.recent {
		r.loads = r.loads[len(r.loads)-b.recent:]
	}
	b.touch()
}

// failed records a content that did not load.
func (b *statusBook) failed(name, hash string, started time.Time, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.record(name)
	r.hash, r.removed = hash, false
	r.failed = &VersionStatus{Hash: hash, State: VersionFailed, Started: started, Error: errorStatus(err)}
	r.waiting = errors.Is(err, dynamicinformer.ErrUnknownResource)
	b.touch()
}

// stopped records the content the memory guard stopped, or clears it (hash "").
func (b *statusBook) stopped(name, hash string, bytes int64) {
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

// removed records that the file is gone: the script leaves the book once its versions are done.
func (b *statusBook) removed(name string) {
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

// scripts is the book's part of Status, with each script's handler counters from counts.
func (b *statusBook) scripts(counts func(script string) map[string]HandlerCounts) (uint64, []ScriptStatus) {
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
		s.Versions = append(s.Versions, v.status())
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

// status is v's VersionStatus now.
func (v *version) status() VersionStatus {
	vs := VersionStatus{Hash: v.hash, State: VersionState(v.currentState().String()), Started: v.started,
		Objects: v.store.size(), Queued: v.queue.len()}
	if v.intake != nil && v.intake != v.queue {
		vs.Queued += v.intake.len()
	}
	return vs
}

// callCounts are one handler's counters for the state API.
type callCounts struct {
	calls, errors, timeouts, stuck atomic.Uint64
}

// scriptCounts holds every script's handler counters, by script then handler.
type scriptCounts struct {
	mu       sync.Mutex
	byScript map[string]map[string]*callCounts
}

func (c *scriptCounts) get(script, handler string) *callCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byScript == nil {
		c.byScript = map[string]map[string]*callCounts{}
	}
	byHandler := c.byScript[script]
	if byHandler == nil {
		byHandler = map[string]*callCounts{}
		c.byScript[script] = byHandler
	}
	cc := byHandler[handler]
	if cc == nil {
		cc = &callCounts{}
		byHandler[handler] = cc
	}
	return cc
}

// forget drops a script's counters, when it is unloaded.
func (c *scriptCounts) forget(script string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byScript, script)
}

func (c *scriptCounts) snapshot(script string) map[string]HandlerCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]HandlerCounts, len(c.byScript[script]))
	for h, cc := range c.byScript[script] {
		out[h] = HandlerCounts{Calls: cc.calls.Load(), Errors: cc.errors.Load(), Timeouts: cc.timeouts.Load(), Stuck: cc.stuck.Load()}
	}
	return out
}
