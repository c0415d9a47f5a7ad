package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counted is a loopback server that counts the requests reaching it.
type counted struct {
	*httptest.Server
	hits atomic.Int64
}

// serveOn starts a server on addr (a loopback address) running h; stopped at cleanup.
func serveOn(t *testing.T, addr string, h http.HandlerFunc) *counted {
	t.Helper()
	c := &counted{}
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		h(w, r)
	}))
	c.Listener.Close()
	c.Listener = ln
	c.Start()
	t.Cleanup(c.Close)
	return c
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }

// names resolves names under .invalid to loopback addresses, like a DNS answer would.
func names(m map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, found := m[host]; found {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{ip}, nil
		}
		return nil, errors.New("no such host")
	}
}

func newClient(t *testing.T, allow []string, lim Limits, lookup map[string]string) *Client {
	t.Helper()
	l, err := ParseList(allow)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Config{Allow: l, Limits: lim, Lookup: names(lookup), Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func get(t *testing.T, c *Client, rawURL string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

func portOfServer(s *counted) string { return s.URL[strings.LastIndex(s.URL, ":")+1:] }

func TestClientAllowList(t *testing.T) {
	t.Parallel()
	srv := serveOn(t, "127.0.0.1", ok)
	other := serveOn(t, "127.0.0.2", ok) // outside every list below: must never be reached
	port := portOfServer(srv)
	oport := portOfServer(other)
	lookup := map[string]string{"hooks.invalid": "127.0.0.1", "sneaky.invalid": "127.0.0.2"}
	for _, tc := range []struct {
		name    string
		allow   []string
		url     string
		refused bool
	}{
		{"ip allowed", []string{"127.0.0.1"}, "http://127.0.0.1:" + port, false},
		{"name and its loopback address allowed", []string{"hooks.invalid", "127.0.0.1/32"}, "http://hooks.invalid:" + port, false},
		{"nothing allowed by default", nil, "http://127.0.0.1:" + port, true},
		{"name not listed", []string{"127.0.0.1"}, "http://other.invalid:" + port, true},
		{"listed name resolving to loopback not covered", []string{"hooks.invalid"}, "http://hooks.invalid:" + port, true},
		{"listed name resolving to another loopback", []string{"sneaky.invalid", "127.0.0.1/32"}, "http://sneaky.invalid:" + oport, true},
		{"loopback address outside the list", []string{"127.0.0.1"}, "http://127.0.0.2:" + oport, true},
		{"port not listed", []string{"127.0.0.1:1"}, "http://127.0.0.1:" + port, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.allow, Limits{}, lookup)
			resp, err := get(t, c, tc.url+"/hook?token=s3cret") //nolint:bodyclose // get closes it at cleanup
			var refused *RefusedError
			if tc.refused {
				if !errors.As(err, &refused) {
					t.Fatalf("want a refusal, got %v %v", resp, err)
				}
				if !strings.Contains(err.Error(), FlagName) || strings.Contains(err.Error(), "s3cret") {
					t.Errorf("refusal %q must name %s and not the query", err, FlagName)
				}
				if Kind(err) != KindRefused {
					t.Errorf("Kind = %s", Kind(err))
				}
				return
			}
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("want 200, got %v %v", resp, err)
			}
		})
	}
	if n := other.hits.Load(); n != 0 {
		t.Errorf("the refused server at 127.0.0.2 got %d requests", n)
	}
}

func TestClientRedirects(t *testing.T) {
	t.Parallel()
	target := serveOn(t, "127.0.0.2", ok)
	var self string
	srv := serveOn(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, target.URL+"/x", http.StatusFound)
		case "/sneaky":
			http.Redirect(w, r, "http://sneaky.invalid:"+portOfServer(target)+"/x", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, self+"/loop", http.StatusFound)
		case "/hop":
			n := len(r.URL.Query()["n"])
			if n < 5 {
				http.Redirect(w, r, self+"/hop?"+strings.Repeat("n=1&", n+1), http.StatusFound)
				return
			}
			ok(w, r)
		}
	})
	self = srv.URL
	c := newClient(t, []string{"127.0.0.1", "sneaky.invalid"}, Limits{}, map[string]string{"sneaky.invalid": "127.0.0.2"})
	for _, path := range []string{"/away", "/sneaky"} {
		_, err := get(t, c, srv.URL+path) //nolint:bodyclose // get closes it at cleanup
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%s: want a refusal, got %v", path, err)
		}
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("a refused redirect target got %d requests", n)
	}
	_, err := get(t, c, srv.URL+"/loop") //nolint:bodyclose // get closes it at cleanup
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("endless redirects: got %v", err)
	}
	if resp, err := get(t, c, srv.URL+"/hop"); err != nil || resp.StatusCode != 200 { //nolint:bodyclose // get closes it at cleanup
		t.Errorf("five redirects: got %v %v", resp, err)
	}
}

func TestClientTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := serveOn(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		select { // never answers, until the client goes or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	c := newClient(t, []string{"127.0.0.1"}, Limits{Timeout: 200 * time.Millisecond}, nil)
	start := time.Now()
	_, err := get(t, c, srv.URL) //nolint:bodyclose // get closes it at cleanup
	if Kind(err) != KindTimeout || time.Since(start) > 5*time.Second {
		t.Errorf("want a timeout within the limit, got %v (%s) after %s", err, Kind(err), time.Since(start))
	}
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := c.Do(req); Kind(err) != KindCanceled { //nolint:bodyclose // no response: the request is cancelled
		t.Errorf("want canceled, got %v (%s)", err, Kind(err))
	}
}

func TestClientBodyLimitStream(t *testing.T) {
	t.Parallel()
	var written atomic.Int64
	done := make(chan struct{})
	chunk := make([]byte, 64<<10)
	srv := serveOn(t, "127.0.0.1", func(w http.ResponseWriter, _ *http.Request) {
		defer close(done)
		for written.Load() < 100<<20 { // 100 MB, unless the client stops reading
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	c := newClient(t, []string{"127.0.0.1"}, Limits{MaxResponseBody: 1 << 20}, nil)
	resp, err := get(t, c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, tooLarge, err := ReadBody(resp, c.Limits().MaxResponseBody)
	if err != nil || !tooLarge || body != nil {
		t.Fatalf("want too large, got %d bytes, %v, %v", len(body), tooLarge, err)
	}
	select { // the connection is closed, so the handler's next writes fail
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server kept writing after the client closed the body")
	}
	if n := written.Load(); n >= 100<<20 {
		t.Errorf("the server streamed the whole %d bytes: the rest was read", n)
	}
}

func TestClientTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(ok))
	t.Cleanup(srv.Close)
	l, _ := ParseList([]string{"127.0.0.1"})
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	c := NewClient(Config{Allow: l, Transport: func(tr *http.Transport) {
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		tr.TLSClientConfig.RootCAs = pool
	}})
	t.Cleanup(c.CloseIdleConnections)
	if resp, err := get(t, c, srv.URL); err != nil || resp.StatusCode != 200 { //nolint:bodyclose // get closes it at cleanup
		t.Fatalf("TLS: %v %v", resp, err)
	}
	plain := NewClient(Config{Allow: l})
	t.Cleanup(plain.CloseIdleConnections)
	if _, err := get(t, plain, srv.URL+"/?k=s3cret"); Kind(err) != KindTLS || strings.Contains(err.Error(), "s3cret") { //nolint:bodyclose // get closes it at cleanup
		t.Errorf("untrusted certificate: want a tls error without the query, got %v (%s)", err, Kind(err))
	}
}

func TestClientProxy(t *testing.T) {
	t.Parallel()
	proxy := serveOn(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "proxied "+r.URL.Host)
	})
	l, _ := ParseList([]string{"api.invalid"})
	pu, _ := url.Parse(proxy.URL)
	c := NewClient(Config{Allow: l, Proxy: http.ProxyURL(pu)})
	t.Cleanup(c.CloseIdleConnections)
	resp, err := get(t, c, "http://api.invalid/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := ReadBody(resp, 100)
	if string(b) != "proxied api.invalid" {
		t.Errorf("via proxy: %q", b)
	}
	if _, err := get(t, c, "http://other.invalid/x"); Kind(err) != KindRefused { //nolint:bodyclose // get closes it at cleanup
		t.Errorf("a name outside the list through the proxy: %v", err)
	}
	if n := proxy.hits.Load(); n != 1 {
		t.Errorf("the proxy got %d requests, want 1", n)
	}
}
