package dynamicinformer

import (
	"sync"
	"time"
)

// Health is one informer's connection to the API server, as Factory.Health reports it.
type Health struct {
	Key Key
	// Healthy is false from a failed list or watch until one succeeds again.
	Healthy bool
	// FailingSince is when the current failure began; zero while healthy.
	FailingSince time.Time
	// LastError is the latest failure's message, kept after recovery.
	LastError string
	// LastContact is when the informer last received anything from the server: a list, a
	// watch opened, an event or a bookmark. Zero before the first.
	LastContact time.Time
	// Relists counts lists (plain or streaming) after the initial one; WatchRestarts counts
	// watches opened after the first.
	Relists, WatchRestarts uint64
	// Shard is how a partitioned informer's objects are filtered (Key.Partition); Mode
	// ShardOff for one that is not partitioned.
	Shard ShardStatus
	// BytesReceived counts the bytes of the response bodies of its lists, watches and probes
	// since it started, as read (after HTTP decompression); zero with a client other than
	// NewClient's (bytes.go).
	BytesReceived uint64
}

// HealthEventKind says what changed.
type HealthEventKind int

const (
	// Failing means a list or watch of a healthy informer failed.
	Failing HealthEventKind = iota + 1
	// StillFailing is a reminder, at most once per Options.Remind, while it keeps failing.
	StillFailing
	// Recovered means the informer receives data again.
	Recovered
)

// HealthEvent is one transition of an informer's health, reported through Options.OnHealth.
type HealthEvent struct {
	Kind HealthEventKind
	Key  Key
	// Err is the failure (Failing, StillFailing).
	Err error
	// Since is when the failure began.
	Since time.Time
	// Down is how long the informer was failing (Recovered).
	Down time.Duration
	// Relisted says the informer listed again to recover, so its handlers saw the whole state
	// again rather than the missed events (Recovered).
	Relisted bool
}

// recoverySettle is how long a watch reopened after a failure may stay silent before the
// informer counts as recovered without a relist. The apiserver answers a watch from a
// resourceVersion it no longer has with an error event as the stream opens; waiting this long
// for a first event tells "resumed" from "about to relist" on a quiet resource too.
const recoverySettle = time.Second

type healthState int

const (
	healthy healthState = iota
	failing
	recovering // a watch reopened after a failure; waiting for its first event
)

// tracker follows one informer's health. The reflector goroutine reports calls; the watch
// proxy goroutine reports contact. Transitions are computed under mu and reported after it is
// released, in order: one informer's calls come from its one reflector goroutine.
type tracker struct {
	key    Key
	notify func(HealthEvent)
	remind time.Duration

	mu          sync.Mutex
	state       healthState
	since       time.Time // failure start
	lastReport  time.Time
	lastErr     error
	relisted    bool // a list succeeded during the current failure
	lastContact time.Time
	lists       uint64 // successful initial lists and relists
	watches     uint64 // successful plain watches
}

func newTracker(key Key, notify func(HealthEvent), remind time.Duration) *tracker {
	if notify == nil {
		notify = func(HealthEvent) {}
	}
	return &tracker{key: key, notify: notify, remind: remind}
}

// failed records a failed list or watch.
func (t *tracker) failed(err error) {
	t.mu.Lock()
	now := time.Now()
	t.lastErr = err
	ev := HealthEvent{Key: t.key, Err: err}
	switch {
	case t.state == healthy:
		t.state, t.since, t.lastReport, t.relisted = failing, now, now, false
		ev.Kind = Failing
	case now.Sub(t.lastReport) >= t.remind:
		t.state, t.lastReport = failing, now
		ev.Kind = StillFailing
	default:
		t.state = failing
	}
	ev.Since = t.since
	t.mu.Unlock()
	if ev.Kind != 0 {
		t.notify(ev)
	}
}

// listed records a successful list, or a streaming list's watch opened.
func (t *tracker) listed() {
	t.mu.Lock()
	t.lists++
	t.lastContact = time.Now()
	t.relisted = true
	ev := t.recover()
	t.mu.Unlock()
	t.report(ev)
}

// watched records a plain watch opened; it reports whether the caller must settle a recovery
// with the watch's first event (or its silence).
func (t *tracker) watched() (pending bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watches++
	t.lastContact = time.Now()
	if t.state == healthy {
		return false
	}
	t.state = recovering // still recovering if an earlier reopened watch ended unheard
	return true
}

// received records an event from a watch; a first event that is not an error settles a
// pending recovery (an error means a relist follows, which settles it instead).
func (t *tracker) received(isError, pending bool) {
	t.mu.Lock()
	t.lastContact = time.Now()
	var ev HealthEvent
	if pending && !isError && t.state == recovering {
		ev = t.recover()
	}
	t.mu.Unlock()
	t.report(ev)
}

// settle ends a pending recovery whose watch stayed silent.
func (t *tracker) settle() {
	t.mu.Lock()
	var ev HealthEvent
	if t.state == recovering {
		ev = t.recover()
	}
	t.mu.Unlock()
	t.report(ev)
}

// recover moves to healthy and returns the Recovered event, or none when already healthy;
// called with mu held.
func (t *tracker) recover() HealthEvent {
	if t.state == healthy {
		return HealthEvent{}
	}
	ev := HealthEvent{Kind: Recovered, Key: t.key, Since: t.since, Down: time.Since(t.since), Relisted: t.relisted}
	t.state, t.since, t.relisted = healthy, time.Time{}, false
	return ev
}

func (t *tracker) report(ev HealthEvent) {
	if ev.Kind != 0 {
		t.notify(ev)
	}
}

func (t *tracker) snapshot() Health {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := Health{Key: t.key, Healthy: t.state != failing, LastContact: t.lastContact}
	if t.state == failing {
		h.FailingSince = t.since
	}
	if t.lastErr != nil {
		h.LastError = t.lastErr.Error()
	}
	if t.lists > 1 {
		h.Relists = t.lists - 1
	}
	if t.watches > 1 {
		h.WatchRestarts = t.watches - 1
	}
	return h
}
