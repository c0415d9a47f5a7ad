package jstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"k8s.io/utils/clock"

	"github.com/jsinformer/jsinformer/internal/netguard"
	"github.com/jsinformer/jsinformer/scripting"
)

// httpRoutes is h.http: the plugin's network under test. It is the plugin's fetch client
// (scripting.HTTPClient): Do hands each request to the test file's goroutine and waits for
// its answer. That goroutine answers only inside pump, which every harness call that runs the
// engine goes through, so route handlers run on the runtime that owns them, between the
// test's own statements, never concurrently with them. No request leaves the process.
type httpRoutes struct {
	reqs   chan *routedRequest // unbuffered: Do waits until pump takes the request
	routes []route             // the test goroutine's
	// after is the harness's virtual clock (offline.Harness.AfterFunc), for answers a route
	// delays; set before the plugin loads, read by request goroutines.
	after func(time.Duration, func()) clock.Timer
	// loading is set while harness() loads the plugin, on the test goroutine: a delayed
	// answer then is refused, as no h.advance can come before harness() returns.
	loading bool
	// allow is flags.allowNet, the runner's --allow-net; nil when not given. Set before the
	// plugin loads, read by request goroutines.
	allow *netguard.List

	mu       sync.Mutex
	seen     []recordedRequest // h.http.requests, in arrival order
	unrouted []string          // requests no route answered, for the failure pump reports
}

type route struct {
	method  string // upper case, "*" for any
	pattern goja.Value
	match   func(url string) bool
	handler goja.Callable
}

type recordedRequest struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

type routedRequest struct {
	rec   recordedRequest
	reply chan routedReply // capacity 1: pump never blocks on it
}

type routedReply struct {
	status  int
	headers map[string]string
	body    string
	err     error
	// delay holds the answer for that long on the virtual clock; never holds it until the
	// request ends (its timeout, an abort, the end of its call).
	delay time.Duration
	never bool
}

// allowList parses flags.allowNet as the runner parses --allow-net: comma-separated entries
// in a string, or a list of them (an empty list allows nothing, the runner's default). nil
// when not given.
func allowList(v any) (*netguard.List, error) {
	var entries []string
	switch a := v.(type) {
	case nil:
		return nil, nil
	case string:
		entries = []string{a}
	case []any:
		for _, e := range a {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("entries must be strings, got %v", e)
			}
			entries = append(entries, s)
		}
	default:
		return nil, errors.New("want the --allow-net entries: a string (comma-separated) or a list")
	}
	l, err := netguard.ParseList(entries)
	if err != nil {
		return nil, err
	}
	return &l, nil
}

func newHTTPRoutes() *httpRoutes { return &httpRoutes{reqs: make(chan *routedRequest)} }

// client is the fetch client the engine gives every version of a plugin.
func (r *httpRoutes) client(string) scripting.HTTPClient { return r }

// Limits are the runner's defaults.
func (r *httpRoutes) Limits() netguard.Limits { return netguard.Limits{}.WithDefaults() }

// Do is called on the plugin's request goroutines. A host outside the script's `net`
// declaration, or outside flags.allowNet when the test gives it, is refused as the runner
// refuses it, before any route is consulted or the request recorded.
func (r *httpRoutes) Do(req *http.Request) (*http.Response, error) {
	check := netguard.CheckDeclared
	if r.allow != nil {
		check = func(ctx context.Context, u *url.URL) error { return netguard.CheckAllowed(ctx, r.allow, u) }
	}
	if err := check(req.Context(), req.URL); err != nil {
		return nil, err
	}
	rec := recordedRequest{Method: req.Method, URL: req.URL.String(), Headers: map[string]string{}}
	for k, v := range req.Header {
		rec.Headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		rec.Body = string(b)
	}
	rq := &routedRequest{rec: rec, reply: make(chan routedReply, 1)}
	ctx := req.Context()
	select {
	case r.reqs <- rq:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	select {
	case rep := <-rq.reply:
		if err := r.hold(ctx, rep); err != nil {
			return nil, err
		}
		return rep.response(req)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// hold keeps a delayed answer until the virtual clock reaches its time, or for ever (never),
// unless the request ends first. The request is held meanwhile (scripting.HoldRequest): a call
// waiting only on such requests lets the harness call return, and h.advance moves the clock
// through the answer's time and the request's timeouts in order. When both fall at the same
// instant the timeout wins: it was armed first, and the answer is not given to a request
// already ended.
func (r *httpRoutes) hold(ctx context.Context, rep routedReply) error {
	if rep.err != nil || (rep.delay <= 0 && !rep.never) {
		return nil
	}
	release := scripting.HoldRequest(ctx)
	defer release()
	answered := make(chan struct{})
	if !rep.never {
		t := r.after(rep.delay, func() {
			release() // before the answer: the harness must not see the call parked once it is given
			if ctx.Err() == nil {
				close(answered)
			}
		})
		defer t.Stop()
	}
	select {
	case <-answered:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (rep routedReply) response(req *http.Request) (*http.Response, error) {
	if rep.err != nil {
		return nil, rep.err
	}
	h := http.Header{}
	for k, v := range rep.headers {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: rep.status, Status: fmt.Sprintf("%d %s", rep.status, http.StatusText(rep.status)),
		Header: h, Body: io.NopCloser(strings.NewReader(rep.body)), ContentLength: int64(len(rep.body)), Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// pump runs op (a harness call that runs the engine) on a goroutine of its own, which it
// joins, and answers the plugin's requests on the calling (test) goroutine meanwhile. A
// request no route answered fails the call, naming it.
func (h *harness) pump(op func() error) error {
	done := make(chan error, 1)
	go func() { done <- op() }()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			return h.http.takeUnrouted()
		case rq := <-h.http.reqs:
			rq.reply <- h.serveRequest(rq.rec)
		}
	}
}

func (r *httpRoutes) takeUnrouted() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unrouted) == 0 {
		return nil
	}
	err := fmt.Errorf("the plugin sent a request no h.http.route answers: %s", strings.Join(r.unrouted, "; "))
	r.unrouted = nil
	return err
}

// serveRequest records rq and answers it with the last route added that matches.
func (h *harness) serveRequest(rec recordedRequest) routedReply {
	r := h.http
	r.mu.Lock()
	r.seen = append(r.seen, rec)
	r.mu.Unlock()
	for i := len(r.routes) - 1; i >= 0; i-- {
		rt := r.routes[i]
		if (rt.method == "*" || rt.method == rec.Method) && rt.match(rec.URL) {
			return h.callRoute(rt, rec)
		}
	}
	name := rec.Method + " " + withoutQuery(rec.URL)
	r.mu.Lock()
	r.unrouted = append(r.unrouted, name)
	r.mu.Unlock()
	return routedReply{err: fmt.Errorf("no h.http.route answers %s", name)}
}

func withoutQuery(u string) string {
	base, _, _ := strings.Cut(u, "?")
	return base
}

// callRoute runs a route's handler: it returns {status, headers, body} (body a string, or
// any other value, sent as JSON), a string (the body of a 200), or nothing (an empty 200).
func (h *harness) callRoute(rt route, rec recordedRequest) routedReply {
	v, err := rt.handler(goja.Undefined(), h.f.toJS(rec))
	if err != nil {
		h.http.fail(rec, "its route threw: "+err.Error())
		return routedReply{err: fmt.Errorf("the route for %s threw", withoutQuery(rec.URL))}
	}
	rep := routedReply{status: 200, headers: map[string]string{}}
	if obj, ok := v.(*goja.Object); ok && !missing(obj.Get("delay")) {
		rep.delay, rep.never, err = replyDelay(obj.Get("delay"))
		if err == nil && h.http.loading {
			err = errors.New("a delay to a request of the initial list, which nothing can end before harness() returns: add this route after harness()")
		}
		if err != nil {
			h.http.fail(rec, "its route answered "+err.Error())
			return routedReply{err: fmt.Errorf("the route for %s answered %w", withoutQuery(rec.URL), err)}
		}
	}
	data, err := h.f.toGo(v)
	if err != nil {
		return routedReply{err: err}
	}
	switch d := data.(type) {
	case nil:
	case string:
		rep.body = d
	case map[string]any:
		rep.fromObject(d)
	default:
		return routedReply{err: fmt.Errorf("the route for %s returned %T: want {status, headers, body} or a string", withoutQuery(rec.URL), d)}
	}
	return rep
}

// fail records a request whose route failed, for the failure pump reports.
func (r *httpRoutes) fail(rec recordedRequest, why string) {
	r.mu.Lock()
	r.unrouted = append(r.unrouted, rec.Method+" "+withoutQuery(rec.URL)+" ("+why+")")
	r.mu.Unlock()
}

// replyDelay reads a reply's delay: a duration string ("30s") or milliseconds; Infinity is
// never.
func replyDelay(v goja.Value) (d time.Duration, never bool, err error) {
	if s, ok := v.Export().(string); ok {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, false, fmt.Errorf("a delay %q that is not a duration such as \"30s\"", s)
		}
		return d, false, nil
	}
	ms := v.ToFloat()
	switch {
	case math.IsInf(ms, 1):
		return 0, true, nil
	case ms < 0 || math.IsNaN(ms) || ms > float64(math.MaxInt64/int64(time.Millisecond)):
		return 0, false, errors.New("a delay that is neither a duration (\"30s\"), milliseconds nor Infinity")
	}
	return time.Duration(ms * float64(time.Millisecond)), false, nil
}

func (rep *routedReply) fromObject(d map[string]any) {
	switch s := d["status"].(type) {
	case int64:
		rep.status = int(s)
	case float64:
		rep.status = int(s)
	}
	if hs, ok := d["headers"].(map[string]any); ok {
		for k, v := range hs {
			rep.headers[k] = fmt.Sprint(v)
		}
	}
	switch b := d["body"].(type) {
	case nil:
	case string:
		rep.body = b
	default:
		data, _ := json.Marshal(b)
		rep.body = string(data)
		if _, ok := rep.headers["content-type"]; !ok {
			rep.headers["content-type"] = "application/json"
		}
	}
}

// object is h.http: route(method, urlPattern, handler) and requests.
func (h *harness) httpObject() goja.Value {
	o := h.f.rt.NewObject()
	_ = o.Set("route", h.route)
	_ = o.DefineAccessorProperty("requests", h.f.rt.ToValue(func() goja.Value {
		h.http.mu.Lock()
		defer h.http.mu.Unlock()
		return h.f.toJS(append([]recordedRequest{}, h.http.seen...))
	}), nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return o
}

// route is h.http.route(method, urlPattern, handler): urlPattern is a string where * matches
// anything (a pattern without ? ignores the query) or a RegExp tested against the whole URL.
func (h *harness) route(method string, pattern goja.Value, handler goja.Value) goja.Value {
	fn, ok := goja.AssertFunction(handler)
	if !ok {
		h.f.throw(fmt.Errorf("h.http.route: the handler must be a function (request) => ({status, headers, body})"))
	}
	rt := route{method: strings.ToUpper(method), pattern: pattern, handler: fn}
	if obj, isObj := pattern.(*goja.Object); isObj && obj.ClassName() == "RegExp" {
		test, _ := goja.AssertFunction(obj.Get("test"))
		rt.match = func(u string) bool {
			v, err := test(obj, h.f.rt.ToValue(u))
			return err == nil && v.ToBoolean()
		}
	} else {
		rt.match = globMatcher(pattern.String())
	}
	h.http.routes = append(h.http.routes, rt)
	return goja.Undefined()
}

// initialRoutes is options.http.routes of harness(plugin, options), or nil.
func initialRoutes(options goja.Value) goja.Value {
	o, ok := options.(*goja.Object)
	if !ok {
		return nil
	}
	hv, ok := o.Get("http").(*goja.Object)
	if !ok {
		return nil
	}
	return hv.Get("routes")
}

// addRoutes adds harness({http: {routes}})'s routes before the plugin loads, so requests
// of the initial list can be answered: each entry holds h.http.route's arguments,
// [method, url, handler].
func (h *harness) addRoutes(routes goja.Value) error {
	if missing(routes) {
		return nil
	}
	var entries []goja.Value
	if err := h.f.rt.ExportTo(routes, &entries); err != nil {
		return errors.New("want an array of [method, url, handler]")
	}
	for i, e := range entries {
		var args []goja.Value
		if err := h.f.rt.ExportTo(e, &args); err != nil || len(args) != 3 {
			return fmt.Errorf("entry %d: want [method, url, handler]", i)
		}
		if _, ok := goja.AssertFunction(args[2]); !ok {
			return fmt.Errorf("entry %d: the handler must be a function (request) => ({status, headers, body})", i)
		}
		h.route(args[0].String(), args[1], args[2])
	}
	return nil
}

// globMatcher matches a URL against a pattern where * matches any run of characters.
func globMatcher(pattern string) func(string) bool {
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re := regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
	keepQuery := strings.Contains(pattern, "?")
	return func(u string) bool {
		if !keepQuery {
			u = withoutQuery(u)
		}
		return re.MatchString(u)
	}
}
