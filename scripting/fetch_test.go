package scripting

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/netguard"
)

// fetchServer is a loopback server for fetch tests: it counts requests and those in progress.
type fetchServer struct {
	*httptest.Server
	hits   atomic.Int64
	active atomic.Int64
}

// newFetchServerTB is a plain loopback server for benchmarks; its URL.
func newFetchServerTB(tb testing.TB, h http.HandlerFunc) string {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL
}

func newFetchServer(t *testing.T, addr string, h http.HandlerFunc) *fetchServer {
	t.Helper()
	s := &fetchServer{}
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.active.Add(1)
		defer s.active.Add(-1)
		h(w, r)
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// fetchOptions allows 127.0.0.1 only, with lim, recording the requests.
func fetchOptions(t *testing.T, lim netguard.Limits, recs *[]RequestRecord) Options {
	t.Helper()
	l, err := netguard.ParseList([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	c := netguard.NewClient(netguard.Config{Allow: l, Limits: lim, Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }})
	t.Cleanup(c.CloseIdleConnections)
	var mu sync.Mutex
	return Options{Timeout: 10 * time.Second, HTTP: c.Limited(), OnRequest: func(r RequestRecord) {
		mu.Lock()
		defer mu.Unlock()
		if recs != nil {
			*recs = append(*recs, r)
		}
	}}
}

// hang answers only when the client goes away.
func hang(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

func TestFetchRequestAndResponse(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Seen", r.Header.Get("X-Token"))
		w.WriteHeader(201)
		_ = json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "body": string(b), "query": r.URL.RawQuery})
	})
	var recs []RequestRecord
	src := fmt.Sprintf(`export default { async onAdd() {
		const r = await fetch(%q + "/hook?token=s3cret", {method: "post", headers: {"X-Token": "t"}, body: JSON.stringify({a: 1})});
		globalThis.out = {status: r.status, ok: r.ok, statusText: r.statusText, ct: r.headers.get("content-type"), seen: r.headers.get("X-SEEN"), json: await r.json(), used: r.bodyUsed};
	} }`, srv.URL)
	s := newTestScript(t, "f.js", src, fetchOptions(t, netguard.Limits{}, &recs))
	t.Cleanup(s.Close)
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	want := `{"status":201,"ok":true,"statusText":"Created","ct":"application/json","seen":"t","json":{"body":"{\"a\":1}","method":"POST","query":"token=s3cret"},"used":true}`
	if got := outJSON(t, s); got != want {
		t.Errorf("out = %s\nwant  %s", got, want)
	}
	if len(recs) != 1 || recs[0].Method != "POST" || recs[0].Path != "/hook" || recs[0].Status != 201 ||
		strings.Contains(fmt.Sprint(recs[0]), "s3cret") || recs[0].Host != strings.TrimPrefix(srv.URL, "http://") {
		t.Errorf("records = %+v", recs)
	}
}

func TestFetchPromiseAllOverlaps(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		select { // the server under test answers after a second
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, r.URL.Path)
	})
	src := fmt.Sprintf(`export default { async onAdd() {
		const rs = await Promise.all([1, 2, 3, 4, 5].map((i) => fetch(%q + "/" + i)));
		globalThis.out = await Promise.all(rs.map((r) => r.text()));
	} }`, srv.URL)
	s := newTestScript(t, "all.js", src, fetchOptions(t, netguard.Limits{}, nil))
	t.Cleanup(s.Close)
	start := time.Now()
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 2*time.Second {
		t.Errorf("five 1 s requests took %s: they did not overlap", d)
	}
	if got := outJSON(t, s); got != `["/1","/2","/3","/4","/5"]` {
		t.Errorf("out = %s", got)
	}
}

func TestFetchDeadlineAndInterruptCancelRequests(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", hang)
	src := fmt.Sprintf(`export default { async onAdd() { await fetch(%q) }, async onUpdate() { await fetch(%q) } }`, srv.URL, srv.URL)
	opts := fetchOptions(t, netguard.Limits{}, nil)
	opts.Timeout = 300 * time.Millisecond
	s := newTestScript(t, "d.js", src, opts)
	t.Cleanup(s.Close)
	start := time.Now()
	if err := s.OnAdd(sample(), Event{}); !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "waiting for fetch") {
		t.Fatalf("error = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the deadline returned after %s", d)
	}
	waitFor(t, "the timed-out request to be cancelled at the server", func() bool { return srv.active.Load() == 0 })

	opts.Timeout = time.Minute
	s2 := newTestScript(t, "i.js", src, opts)
	done := make(chan error, 1)
	go func() { done <- s2.OnUpdate(sample(), sample(), Event{}) }()
	waitFor(t, "the request to reach the server", func() bool { return srv.active.Load() == 1 })
	s2.Interrupt()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("error = %v, want ErrInterrupted", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the interrupted call did not return")
	}
	waitFor(t, "the interrupted request to be cancelled at the server", func() bool { return srv.active.Load() == 0 })
	s2.Close()
}

func TestFetchAbortAndSignalTimeout(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", hang)
	src := fmt.Sprintf(`export default { async onAdd() {
		const out = [];
		const c = new AbortController();
		const p = fetch(%[1]q, {signal: c.signal});
		c.abort();
		try { await p } catch (e) { out.push(e.name) }
		try { await fetch(%[1]q, {signal: AbortSignal.timeout(100)}) } catch (e) { out.push(e.name) }
		try { await fetch(%[1]q, {signal: AbortSignal.abort()}) } catch (e) { out.push(e.name) }
		globalThis.out = out;
	} }`, srv.URL)
	s := newTestScript(t, "a.js", src, fetchOptions(t, netguard.Limits{}, nil))
	t.Cleanup(s.Close)
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := outJSON(t, s); got != `["AbortError","TimeoutError","AbortError"]` {
		t.Errorf("out = %s", got)
	}
	waitFor(t, "the aborted requests to end at the server", func() bool { return srv.active.Load() == 0 })
}

func TestFetchRefusedNamesHostAndFlag(t *testing.T) {
	t.Parallel()
	other := newFetchServer(t, "127.0.0.2", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "no") })
	src := fmt.Sprintf(`export default { async onAdd() {
		try { await fetch(%q + "/hook?token=s3cret") } catch (e) { globalThis.out = e.message }
	} }`, other.URL)
	s := newTestScript(t, "r.js", src, fetchOptions(t, netguard.Limits{}, nil))
	t.Cleanup(s.Close)
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	got := outJSON(t, s)
	if !strings.Contains(got, "127.0.0.2") || !strings.Contains(got, "--allow-net") || strings.Contains(got, "s3cret") || strings.Contains(got, "/hook") {
		t.Errorf("message = %s: want the host and the flag, not the path or query", got)
	}
	if n := other.hits.Load(); n != 0 {
		t.Errorf("the refused server got %d requests", n)
	}
}

// TestFetchRefusalHasPositionAndFix: a refused request's error, uncaught after an await,
// carries the script's file:line and stack as any other error does, and names the list that
// refused: the script's net declaration or the runner's --allow-net.
func TestFetchRefusalHasPositionAndFix(t *testing.T) {
	t.Parallel()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }
	srv := newFetchServer(t, "127.0.0.1", ok)
	other := newFetchServer(t, "127.0.0.2", ok)
	for _, tc := range []struct{ net, url, fix string }{
		{`["hooks.invalid"]`, srv.URL, "add it to the script's net: [...]"},
		{`["127.0.0.0/8"]`, other.URL, "allow it with the runner's --allow-net"},
	} {
		src := fmt.Sprintf("export default { net: %s, async onAdd() {\n  await null;\n  const r = await fetch(%q);\n} }", tc.net, tc.url+"/x")
		s := newTestScript(t, "p.js", src, fetchOptions(t, netguard.Limits{}, nil))
		err := s.OnAdd(sample(), Event{})
		s.Close()
		var se *ScriptError
		if !errors.As(err, &se) || se.File != "p.js" || se.Line != 3 || !strings.HasPrefix(se.Stack, "at onAdd (p.js:3:") {
			t.Errorf("%s: error %v (%+v), want it at p.js:3 with a stack", tc.url, err, se)
			continue
		}
		if !strings.Contains(se.Message, "refused") || !strings.Contains(se.Message, tc.fix) {
			t.Errorf("%s: message %q, want the fix %q", tc.url, se.Message, tc.fix)
		}
	}
	if n := srv.hits.Load() + other.hits.Load(); n != 0 {
		t.Errorf("the refused servers got %d requests", n)
	}
}

func TestFetchBodyLimits(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", 10<<10))
	})
	src := fmt.Sprintf(`export default { async onAdd() {
		const out = [];
		const r = await fetch(%[1]q);
		out.push(r.status);
		try { await r.text() } catch (e) { out.push(e.name + ": " + e.message) }
		try { await fetch(%[1]q, {method: "POST", body: "y".repeat(2048)}) } catch (e) { out.push(e.name) }
		try { fetch(%[1]q, {method: "POST", body: {a: 1}}) } catch (e) { out.push(e.name) }
		globalThis.out = out;
	} }`, srv.URL)
	s := newTestScript(t, "b.js", src, fetchOptions(t, netguard.Limits{MaxResponseBody: 1 << 10, MaxRequestBody: 1 << 10}, nil))
	t.Cleanup(s.Close)
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	want := `[200,"RangeError: fetch GET ` + strings.TrimPrefix(srv.URL, "http://") +
		`: the response body exceeds the limit of 1024 bytes (--fetch-max-body); it was not read","RangeError","TypeError"]`
	if got := outJSON(t, s); got != want {
		t.Errorf("out = %s\nwant  %s", got, want)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("server got %d requests, want 1 (the oversized request body must not be sent)", n)
	}
}

func TestFetchRefusedWherePure(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", hang)
	src := fmt.Sprintf(`export default { indexers: { byX(obj) { fetch(%q); return "x" } }, onAdd() {} }`, srv.URL)
	s := newTestScript(t, "ix.js", src, fetchOptions(t, netguard.Limits{}, nil))
	t.Cleanup(s.Close)
	_, err := s.Index("byX", sample())
	if err == nil || !strings.Contains(err.Error(), "fetch is not allowed in index functions") {
		t.Errorf("Index error = %v", err)
	}
	_, err = instantiate("top.js", fmt.Sprintf(`fetch(%q); export default { onAdd() {} }`, srv.URL), fetchOptions(t, netguard.Limits{}, nil))
	if err == nil || !strings.Contains(err.Error(), "fetch is not allowed in a module's top level") {
		t.Errorf("module error = %v", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("server got %d requests", n)
	}
}

// TestFetchRefusedInAdmission: validate and mutate have no side effects, so fetch throws there
// as a k8s write does, and no request leaves.
func TestFetchRefusedInAdmission(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", hang)
	src := fmt.Sprintf(`export default { validate() { fetch(%q) }, mutate() { fetch(%q) } }`, srv.URL, srv.URL)
	s := newTestScript(t, "adm.js", src, fetchOptions(t, netguard.Limits{}, nil))
	t.Cleanup(s.Close)
	if _, err := s.Validate(AdmissionRequest{Operation: "CREATE", Object: sample()}); !errors.Is(err, ErrSideEffect) ||
		!strings.Contains(err.Error(), "fetch in validate") || !strings.Contains(err.Error(), "admission allows no network calls") {
		t.Errorf("Validate err = %v, want ErrSideEffect naming fetch", err)
	}
	if _, err := s.Mutate(AdmissionRequest{Operation: "CREATE", Object: sample()}); !errors.Is(err, ErrSideEffect) {
		t.Errorf("Mutate err = %v, want ErrSideEffect", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("server got %d requests", n)
	}
}

func TestFetchNotAwaitedIsCancelledAtCallEnd(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", hang)
	var recs []RequestRecord
	src := fmt.Sprintf(`export default { onAdd() { fetch(%q) } }`, srv.URL)
	s := newTestScript(t, "n.js", src, fetchOptions(t, netguard.Limits{}, &recs))
	t.Cleanup(s.Close)
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the request to be cancelled at the server", func() bool { return srv.active.Load() == 0 })
	if len(recs) != 1 || recs[0].Error != netguard.KindCanceled {
		t.Errorf("records = %+v, want one cancelled", recs)
	}
}

func TestFetchNetDeclaration(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	for _, tc := range []struct {
		net, want string
	}{
		{`["hooks.invalid"]`, `"refused"`},
		{`["127.0.0.0/8"]`, `"ok"`},
	} {
		src := fmt.Sprintf(`export default { net: %s, async onAdd() {
			try { globalThis.out = await (await fetch(%q)).text() } catch (e) { globalThis.out = /script's net declaration/.test(e.message) ? "refused" : e.message }
		} }`, tc.net, srv.URL)
		s := newTestScript(t, "net.js", src, fetchOptions(t, netguard.Limits{}, nil))
		if err := s.OnAdd(sample(), Event{}); err != nil {
			t.Fatal(err)
		}
		if got := outJSON(t, s); got != tc.want {
			t.Errorf("net %s: out = %s, want %s", tc.net, got, tc.want)
		}
		if d := s.Definition(); len(d.Net) != 1 {
			t.Errorf("Definition().Net = %v", d.Net)
		}
		s.Close()
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
	_, err := instantiate("bad.js", `export default {
  net: ["host:99999"], onAdd() {} }`, Options{})
	var se *ScriptError
	if !errors.As(err, &se) || !errors.Is(err, ErrInvalidDefinition) || se.Line != 2 || !strings.Contains(se.Message, "'net'") {
		t.Errorf("invalid net: %v", err)
	}
}

func TestUtilRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	src := `export default { onAdd() {
		const r = (h) => new Response("", {status: 429, headers: h});
		globalThis.out = [
			util.retryAfter(r({"Retry-After": "7"})),
			util.retryAfter(r({"Retry-After": "Fri, 02 Jan 2026 03:04:35 GMT"})),
			util.retryAfter(r({"Retry-After": "soon"}), 1000),
			util.retryAfter(r({})),
			util.retryAfter(r({"Retry-After": "99999999"})),
		];
	} }`
	s := newTestScript(t, "ra.js", src, Options{Now: func() time.Time { return now }})
	t.Cleanup(s.Close)
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if got := outJSON(t, s); got != `[7000,30000,1000,null,86400000]` {
		t.Errorf("out = %s", got)
	}
}

// The request timeout (--fetch-timeout) on the wall clock, when no Options.Clock is given: the
// request is cut at the limit, well within the call's deadline, its error names the flag, and
// the record's kind is timeout.
func TestFetchRequestTimeoutOnTheWallClock(t *testing.T) {
	t.Parallel()
	srv := newFetchServer(t, "127.0.0.1", hang)
	src := fmt.Sprintf(`export default { async onAdd() {
		try { await fetch(%q); globalThis.out = "answered" } catch (e) { globalThis.out = e.message }
	} }`, srv.URL+"/slow?token=s3cret")
	var recs []RequestRecord
	s := newTestScript(t, "t.js", src, fetchOptions(t, netguard.Limits{Timeout: 200 * time.Millisecond}, &recs))
	t.Cleanup(s.Close)
	start := time.Now()
	if err := s.OnAdd(sample(), Event{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 5*time.Second {
		t.Errorf("the request ended after %s, want about 200ms", d)
	}
	if got, want := outJSON(t, s), `"fetch GET 127.0.0.1:`; !strings.HasPrefix(got, want) ||
		!strings.Contains(got, "timed out after 200ms (--fetch-timeout)") || strings.Contains(got, "s3cret") {
		t.Errorf("out = %s, want the host and the flag, never the query", got)
	}
	if len(recs) != 1 || recs[0].Error != netguard.KindTimeout {
		t.Errorf("records = %+v, want one with error kind %q", recs, netguard.KindTimeout)
	}
	waitFor(t, "the timed-out request to end at the server", func() bool { return srv.active.Load() == 0 })
}
