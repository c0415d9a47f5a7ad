package scripting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/internal/netguard"
)

// startJS is native.start(method, url, headers, body, timeoutMs): it starts a request on a
// goroutine of its own and returns [promise, id]. Misuse throws at once.
func (f *fetchModule) startJS(call goja.FunctionCall) goja.Value {
	defer f.guard("fetch")
	f.sideEffect("fetch") // validate and mutate: no side effects at all (effects.go)
	if f.noEffects != "" {
		f.throwf("fetch is not allowed in %s: they must be fast and free of side effects", f.noEffects)
	}
	if f.client == nil {
		f.throwf("fetch is not available in this runner")
	}
	req, r := f.newRequest(call)
	r.errObj = f.newCallerError()
	p, resolve, reject := f.rt.NewPromise()
	f.nextID++
	r.id, r.resolve, r.reject = f.nextID, resolve, reject
	f.open[r.id] = r
	f.mu.Lock()
	f.nOpen = len(f.open)
	f.mu.Unlock()
	f.wg.Add(1)
	go f.run(req, r)
	return f.rt.NewArray(p, r.id)
}

// newRequest reads start's arguments into a request whose context ends with the call, at the
// request timeout, at the signal's timeout, or when aborted.
func (f *fetchModule) newRequest(call goja.FunctionCall) (*http.Request, *fetchReq) {
	method, raw := call.Argument(0).String(), call.Argument(1).String()
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(f.rt.NewTypeError("fetch: invalid URL: want an absolute http: or https: URL"))
	}
	var body io.Reader
	if b := call.Argument(3); !isMissing(b) {
		s := b.String()
		if int64(len(s)) > f.limits.MaxRequestBody {
			f.throwRange("fetch %s %s: request body of %d bytes exceeds the limit of %d (--fetch-max-request-body)",
				method, u.Host, len(s), f.limits.MaxRequestBody)
		}
		body = strings.NewReader(s)
	}
	r := &fetchReq{call: f.ctx(), rec: RequestRecord{Method: method, Host: u.Host, Path: u.EscapedPath()}}
	ctx := f.requestContext(r, call.Argument(4).ToFloat())
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		r.cancel(nil)
		panic(f.rt.NewTypeError("fetch: invalid request: " + err.Error()))
	}
	f.setHeaders(req, call.Argument(2))
	return req, r
}

func (f *fetchModule) setHeaders(req *http.Request, v goja.Value) {
	var pairs [][]string
	if err := f.rt.ExportTo(v, &pairs); err != nil {
		panic(f.rt.NewTypeError("fetch: invalid headers"))
	}
	for _, kv := range pairs {
		if len(kv) == 2 {
			req.Header.Add(kv[0], kv[1])
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "jsinformer")
	}
}

// requestContext is r's request's context, and sets r.cancel: it ends with the call, at the
// request timeout, at the signal's timeout (timeoutMs >= 0), or when cancelled with a cause
// (an abort). Both timeouts run on f.clock; each releases r's hold (fetchclock.go) before it
// cancels, so the harness never sees the call parked once its clock has ended a request.
func (f *fetchModule) requestContext(r *fetchReq, timeoutMs float64) context.Context {
	ctx, cancel := context.WithCancelCause(netguard.Restrict(f.ctx(), f.restrict()))
	ctx = context.WithValue(ctx, holdKey{}, hold{f: f, r: r})
	expire := func(cause error) func() {
		return func() {
			f.release(r)
			cancel(cause)
		}
	}
	stop := f.clock.AfterFunc(f.limits.Timeout, expire(errRequestTimeout)).Stop
	stopSignal := func() bool { return false }
	if timeoutMs >= 0 {
		stopSignal = f.clock.AfterFunc(time.Duration(timeoutMs*float64(time.Millisecond)), expire(errSignalTimeout)).Stop
	}
	r.cancel = func(cause error) {
		stopSignal()
		stop()
		cancel(cause)
	}
	return ctx
}

// run is a request's goroutine, started by startJS and joined by reset (the executor's).
func (f *fetchModule) run(req *http.Request, r *fetchReq) {
	defer f.wg.Done()
	start := time.Now()
	resp, err := f.client.Do(req) //nolint:bodyclose // netguard.ReadBody closes it
	if err == nil {
		r.status, r.statusText = resp.StatusCode, strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode)))
		r.url, r.redirected = resp.Request.URL.Redacted(), resp.Request.URL.String() != req.URL.String()
		r.headers = headerPairs(resp.Header)
		r.body, r.tooLarge, err = netguard.ReadBody(resp, f.limits.MaxResponseBody)
		r.rec.Status, r.rec.Bytes = r.status, int64(len(r.body))
	}
	if err != nil {
		r.err = f.failure(req, r, err)
		r.rec.Error = netguard.Kind(err)
		switch c := context.Cause(req.Context()); {
		case errors.Is(c, errAborted):
			r.rec.Error = netguard.KindCanceled
		case errors.Is(c, errSignalTimeout), errors.Is(c, errRequestTimeout):
			r.rec.Error = netguard.KindTimeout
		}
	}
	r.rec.Duration = time.Since(start)
	f.mu.Lock()
	f.releaseLocked(r)
	r.finished = true
	f.done = append(f.done, r)
	f.updateParked()
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// failure is the error a request's promise rejects with; its text names the host only.
func (f *fetchModule) failure(req *http.Request, r *fetchReq, err error) error {
	host := req.URL.Host
	switch cause := context.Cause(req.Context()); {
	case errors.Is(cause, errAborted), errors.Is(cause, errSignalTimeout):
		return fmt.Errorf("fetch %s %s: %w", req.Method, host, cause)
	case errors.Is(cause, errRequestTimeout), cause == nil && netguard.Kind(err) == netguard.KindTimeout:
		// The transport's own timeouts are the same limit on the wall clock; whichever timer
		// fires first, the script reads one message.
		return fmt.Errorf("fetch %s %s: timed out after %s (--fetch-timeout): %w", req.Method, host, f.limits.Timeout, context.DeadlineExceeded)
	}
	var re *netguard.RequestError
	if errors.As(err, &re) {
		err = re.Err
	}
	return fmt.Errorf("fetch %s %s: %w", req.Method, host, err)
}

func headerPairs(h http.Header) [][2]string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([][2]string, 0, len(keys))
	for _, k := range keys {
		pairs = append(pairs, [2]string{strings.ToLower(k), strings.Join(h[k], ", ")})
	}
	return pairs
}
