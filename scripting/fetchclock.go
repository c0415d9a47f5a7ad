package scripting

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// FetchClock is the time fetch's timeouts run on: the request timeout (--fetch-timeout) and
// AbortSignal.timeout. The runner passes the wall clock; the offline harness its virtual
// clock, so a test moves a request past its timeout with h.advance.
type FetchClock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) clock.Timer
}

// holdKey is the context key of a request's hold (HoldRequest).
type holdKey struct{}

// hold is what a request's context carries so that its HTTP client may declare it held.
type hold struct {
	f *fetchModule
	r *fetchReq
}

// HoldRequest declares that the request of ctx (the context of a request fetch sent) waits on
// the clock alone: nothing but a timer of Options.Clock, an abort or the end of its call ends
// it. The offline harness's HTTP client holds the requests of routes that answer late or
// never. A call waiting only on held requests is parked (Options.OnParked) until release,
// which the holder calls — synchronously, before it answers — when its timer fires or the
// request ends; release is idempotent. Without a fetch request in ctx both are no-ops.
func HoldRequest(ctx context.Context) (release func()) {
	h, ok := ctx.Value(holdKey{}).(hold)
	if !ok {
		return func() {}
	}
	h.f.setHeld(h.r)
	return func() { h.f.release(h.r) }
}

// Hold states of a request, under fetchModule.mu: a request is held at most once.
const (
	notHeld = iota
	held
	released
)

// setHeld marks r held; from a request goroutine.
func (f *fetchModule) setHeld(r *fetchReq) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.hold == notHeld && !r.finished {
		r.hold = held
		f.nHeld++
		f.updateParked()
	}
}

// release ends r's hold, if any; from any goroutine, before what ends r is done.
func (f *fetchModule) release(r *fetchReq) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releaseLocked(r)
}

func (f *fetchModule) releaseLocked(r *fetchReq) {
	if r.hold == held {
		f.nHeld--
		f.updateParked()
	}
	r.hold = released
}

// setWaiting records that the executor waits in settleNext (true) or runs again (false).
func (f *fetchModule) setWaiting(w bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waiting = w
	f.updateParked()
}

// updateParked tells OnParked when the call starts or stops being parked: its executor waits
// for requests, none has finished unsettled, and every open one is held. Called with mu held,
// so the harness's count changes in the order the states do.
func (f *fetchModule) updateParked() {
	p := f.waiting && len(f.done) == 0 && f.nOpen > 0 && f.nHeld == f.nOpen
	if p == f.parked {
		return
	}
	f.parked = p
	if f.onParked != nil {
		if p {
			f.onParked(1)
		} else {
			f.onParked(-1)
		}
	}
}

// realFetchClock is the wall clock, when Options.Clock is nil.
type realFetchClock struct{ clock.RealClock }
