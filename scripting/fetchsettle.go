package scripting

import (
	"context"
	"errors"
	"fmt"

	"github.com/dop251/goja"
)

// pending reports requests of the current call still to settle.
func (f *fetchModule) pending() bool { return len(f.open) > 0 }

// settleNext waits until a request finishes or ctx ends, then settles every finished request's
// promise; goja runs the promise jobs this queues before the resolving function returns. An
// error is ctx's, or an uncatchable one (an interrupt) from those jobs.
func (f *fetchModule) settleNext(ctx context.Context) error {
	f.setWaiting(true)
	select {
	case <-f.wake:
	case <-ctx.Done():
		f.setWaiting(false)
		return ctx.Err()
	}
	f.mu.Lock()
	f.waiting = false
	done := f.done
	f.done = nil
	f.nOpen -= len(done)
	f.updateParked()
	f.mu.Unlock()
	for i, r := range done {
		delete(f.open, r.id)
		f.record(r)
		var err error
		if r.err != nil {
			err = r.reject(f.rejection(r))
		} else {
			err = r.resolve(f.response(r))
		}
		r.cancel(nil)
		if err != nil {
			f.requeue(done[i+1:])
			return err
		}
	}
	return nil
}

// requeue puts back finished requests not settled, for reset to record.
func (f *fetchModule) requeue(rs []*fetchReq) {
	f.mu.Lock()
	f.done = append(rs, f.done...)
	f.nOpen += len(rs)
	f.mu.Unlock()
}

func (f *fetchModule) record(r *fetchReq) {
	if f.onRequest != nil {
		f.onRequest(r.rec)
	}
}

// response is the raw response fetch.js wraps in a Response.
func (f *fetchModule) response(r *fetchReq) *goja.Object {
	o := f.rt.NewObject()
	hs := make([]any, len(r.headers))
	for i, kv := range r.headers {
		hs[i] = f.rt.NewArray(kv[0], kv[1])
	}
	var tooLarge any
	if r.tooLarge {
		tooLarge = fmt.Sprintf("fetch %s %s: the response body exceeds the limit of %d bytes (--fetch-max-body); it was not read",
			r.rec.Method, r.rec.Host, f.limits.MaxResponseBody)
	}
	for k, v := range map[string]any{"status": r.status, "statusText": r.statusText, "url": r.url,
		"redirected": r.redirected, "headers": f.rt.NewArray(hs...), "body": string(r.body), "tooLarge": tooLarge} {
		_ = o.Set(k, v)
	}
	return o
}

// rejection is the Error a failed request rejects with, named AbortError or TimeoutError
// for an abort or a signal's timeout, as in browsers.
func (f *fetchModule) rejection(r *fetchReq) *goja.Object {
	e := r.errObj
	_ = e.Set("message", r.err.Error())
	f.remember(e, r.err)
	switch {
	case errors.Is(r.err, errAborted):
		_ = e.Set("name", "AbortError")
	case errors.Is(r.err, errSignalTimeout):
		_ = e.Set("name", "TimeoutError")
	}
	return e
}

// newCallerError is an Error whose stack is the current one: fetch's caller's (its message
// is set when the request fails).
func (f *fetchModule) newCallerError() *goja.Object {
	obj, err := f.rt.New(f.internals.errorCtor, f.rt.ToValue(""))
	if err != nil {
		panic(err)
	}
	return obj
}

// reset ends the call's requests: those in flight are cancelled (the call's context is
// already) and joined, so no request outlives its call; the unsettled are recorded.
func (f *fetchModule) reset() {
	if len(f.open) == 0 {
		return
	}
	for _, r := range f.open {
		r.cancel(context.Canceled)
	}
	f.wg.Wait()
	f.mu.Lock()
	done := f.done
	f.done = nil
	f.mu.Unlock()
	for _, r := range done {
		if _, ok := f.open[r.id]; ok {
			f.record(r)
		}
	}
	clear(f.open)
	f.mu.Lock()
	f.nOpen, f.nHeld = 0, 0 // every request was released when its goroutine ended
	f.mu.Unlock()
	select {
	case <-f.wake:
	default:
	}
}

// waitFetches settles the call's requests until p is no longer pending or none is left.
func (s *instance) waitFetches(p *goja.Promise) error {
	for p.State() == goja.PromiseStatePending && s.fetch.pending() {
		err := s.fetch.settleNext(s.context())
		if err == nil {
			continue
		}
		if s.base.Err() != nil {
			return s.interruptedError(s.callName)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return &ScriptError{File: s.name, Err: ErrTimeout,
				Message: s.timedOut("waiting for fetch")}
		}
		return s.scriptError(err)
	}
	return nil
}
