package scripting

import (
	"context"
	_ "embed"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/internal/netguard"
)

//go:embed fetch.js
var fetchSource string

var fetchProgram = goja.MustCompile(internalName, fetchSource, true)

// HTTPClient sends the requests of fetch: a *netguard.Client (or its Limited, with the
// per-script concurrency limit) in the runner, routes in the offline harness. Do must be safe
// for concurrent use and honour the request's context.
type HTTPClient interface {
	Do(*http.Request) (*http.Response, error)
	Limits() netguard.Limits
}

// RequestRecord is what a call learns of one of its requests, for metrics and traces: never
// the query, the headers or the bodies, which may carry credentials.
type RequestRecord struct {
	Method   string
	Host     string
	Path     string
	Status   int // 0 when no response arrived
	Duration time.Duration
	Bytes    int64  // response body bytes read
	Error    string // netguard.Kind of the failure, "" on a response
}

var (
	errAborted       = errors.New("fetch aborted")
	errSignalTimeout = errors.New("fetch timed out (AbortSignal.timeout)")
	// errRequestTimeout ends a request at the request timeout (--fetch-timeout).
	errRequestTimeout = errors.New("fetch request timeout")
)

// fetchModule is the native side of fetch (fetch.js). Requests run on goroutines of their
// own; their results come back to the executor through done and wake, and only the executor
// settles promises (settleFetches, from instance.settle). Every request is cancelled when its
// call ends (the call's context) and joined in reset, so none outlives its call.
type fetchModule struct {
	*callEnv
	client    HTTPClient
	limits    netguard.Limits
	ctx       func() context.Context
	restrict  func() *netguard.List
	onRequest func(RequestRecord)
	clock     FetchClock // the timeouts' (Options.Clock)
	onParked  func(delta int)
	start     time.Time // on clock: AbortSignal.timeout's deadlines count from it

	// The executor's alone.
	nextID int64
	open   map[int64]*fetchReq

	wg   sync.WaitGroup // the request goroutines of the current call
	mu   sync.Mutex
	done []*fetchReq   // finished requests not yet settled; guarded by mu
	wake chan struct{} // capacity 1: a request finished
	// Guarded by mu, for the parked state (fetchclock.go): the open requests (len(open), kept
	// where request goroutines may read it), how many of them are held, whether the executor
	// waits for them, and what OnParked was last told.
	nOpen, nHeld    int
	waiting, parked bool
}

// fetchReq is one request. The goroutine writes the result fields, then puts it on done; the
// executor reads them only after taking it off done.
type fetchReq struct {
	id              int64
	resolve, reject func(any) error
	cancel          context.CancelCauseFunc
	call            context.Context // the call's, read by the goroutine: contexts are safe to share
	rec             RequestRecord
	status          int
	statusText, url string
	redirected      bool
	headers         [][2]string
	body            []byte
	tooLarge        bool
	err             error
	// errObj is the Error the promise rejects with, made when fetch was called so that its
	// stack is the caller's: a rejection settles outside any script frame, and without it the
	// error would have no file:line (rejection sets its message).
	errObj *goja.Object
	// Guarded by the module's mu: the hold state (fetchclock.go) and whether the request
	// goroutine has put it on done.
	hold     int
	finished bool
}

func newFetch(env *callEnv, opts Options, ctx func() context.Context, restrict func() *netguard.List) *fetchModule {
	clk := opts.Clock
	if clk == nil {
		clk = realFetchClock{}
	}
	f := &fetchModule{callEnv: env, client: opts.HTTP, ctx: ctx, restrict: restrict, onRequest: opts.OnRequest,
		clock: clk, onParked: opts.OnParked, start: clk.Now(), open: map[int64]*fetchReq{}, wake: make(chan struct{}, 1)}
	if f.client != nil {
		f.limits = f.client.Limits().WithDefaults()
	}
	return f
}

// install defines fetch, Headers, Response, AbortController and AbortSignal.
func (f *fetchModule) install() error {
	v, err := f.rt.RunProgram(fetchProgram)
	if err != nil {
		return err
	}
	mk, _ := goja.AssertFunction(v)
	native := f.rt.NewObject()
	for name, fn := range map[string]any{"start": f.startJS, "abort": f.abortJS, "now": f.nowJS} {
		if err := native.Set(name, fn); err != nil {
			return err
		}
	}
	res, err := mk(goja.Undefined(), native)
	if err != nil {
		return err
	}
	obj := res.ToObject(f.rt)
	for _, name := range []string{"fetch", "Headers", "Response", "AbortController", "AbortSignal"} {
		if err := f.rt.Set(name, obj.Get(name)); err != nil {
			return err
		}
	}
	return nil
}

func (f *fetchModule) nowJS() float64 { return float64(f.clock.Now().Sub(f.start).Milliseconds()) }

func (f *fetchModule) abortJS(id int64) {
	if r := f.open[id]; r != nil {
		f.release(r)
		r.cancel(errAborted)
	}
}
