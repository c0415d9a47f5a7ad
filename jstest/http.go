package jstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/dop251/goja"

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
}

func newHTTPRoutes() *httpRoutes { return &httpRoutes{reqs: make(chan *routedRequest)} }

// client is the fetch client the engine gives every version of a plugin.
func (r *httpRoutes) client(string) scripting.HTTPClient { return r }

// Limits are the runner's defaults.
func (r *httpRoutes) Limits() netguard.Limits { return netguard.Limits{}.WithDefaults() }

// Do is called on the plugin's request goroutines. A host outside the script's `net`
// declaration is refused as the runner refuses it, before any route is consulted or the
// request recorded.
func (r *httpRoutes) Do(req *http.Request) (*http.Response, error) {
	if err := netguard.CheckDeclared(req.Context(), req.URL); err != nil {
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
		return rep.response(req)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
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
		h.http.mu.Lock()
		h.http.unrouted = append(h.http.unrouted, rec.Method+" "+withoutQuery(rec.URL)+" (its route threw: "+err.Error()+")")
		h.http.mu.Unlock()
		return routedReply{err: fmt.Errorf("the route for %s threw", withoutQuery(rec.URL))}
	}
	rep := routedReply{status: 200, headers: map[string]string{}}
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
