package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Defaults of Limits' zero fields.
const (
	DefaultTimeout         = 10 * time.Second
	DefaultMaxResponseBody = 4 << 20
	DefaultMaxRequestBody  = 1 << 20
	DefaultMaxConcurrent   = 10
	MaxRedirects           = 5
)

// Limits bound one request; a zero field takes its default.
type Limits struct {
	Timeout         time.Duration // a whole request, redirects and body included
	MaxResponseBody int64         // bytes of a response body read; the rest is not read
	MaxRequestBody  int64         // bytes of a request body
	MaxConcurrent   int           // requests in flight per script
}

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxResponseBody <= 0 {
		l.MaxResponseBody = DefaultMaxResponseBody
	}
	if l.MaxRequestBody <= 0 {
		l.MaxRequestBody = DefaultMaxRequestBody
	}
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = DefaultMaxConcurrent
	}
	return l
}

// Config makes a Client.
type Config struct {
	Allow  List
	Limits Limits
	// Lookup, when set, resolves host names instead of DNS (tests map names under .invalid
	// to loopback addresses with it). The address check applies to what it returns.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Proxy picks the proxy of a request; nil is http.ProxyFromEnvironment.
	Proxy func(*http.Request) (*url.URL, error)
	// TLS roots etc. come from the transport; tests set RootCAs through this hook.
	Transport func(*http.Transport)
}

// Client does requests within the allow list. Safe for concurrent use.
type Client struct {
	allow   List
	limits  Limits
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
	proxy   func(*http.Request) (*url.URL, error)
	proxies sync.Map // host:port of proxies chosen so far: dialled without the address check
	tr      *http.Transport
	http    *http.Client
}

// NewClient makes a Client with its own pooled transport.
func NewClient(cfg Config) *Client {
	c := &Client{allow: cfg.Allow, limits: cfg.Limits.WithDefaults(), lookup: cfg.Lookup, proxy: cfg.Proxy}
	if c.proxy == nil {
		c.proxy = http.ProxyFromEnvironment
	}
	c.tr = &http.Transport{
		Proxy:                 c.pickProxy,
		DialContext:           c.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: c.limits.Timeout,
	}
	if cfg.Transport != nil {
		cfg.Transport(c.tr)
	}
	c.http = &http.Client{Transport: c.tr, CheckRedirect: c.checkRedirect}
	return c
}

// Limits are the client's limits, defaults filled.
func (c *Client) Limits() Limits { return c.limits }

// Allow is the runner's list.
func (c *Client) Allow() List { return c.allow }

// CloseIdleConnections closes the pooled connections not in use.
func (c *Client) CloseIdleConnections() { c.tr.CloseIdleConnections() }

type restrictKey struct{}

// Restrict returns a context whose requests must also match l by name: a script's declared
// `net` list. A nil l restricts nothing.
func Restrict(ctx context.Context, l *List) context.Context {
	if l == nil {
		return ctx
	}
	return context.WithValue(ctx, restrictKey{}, l)
}

// Do sends req after checking its host; the caller closes the body. Errors name the host only.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if err := c.checkURL(req.Context(), req.URL); err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, scrub(req.URL.Host, err)
	}
	return resp, nil
}

// checkURL is the name check of a request or redirect.
func (c *Client) checkURL(ctx context.Context, u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("fetch %s: unsupported scheme %q (http and https only)", u.Hostname(), u.Scheme)
	}
	return checkName(ctx, &c.allow, u.Hostname(), portOf(u))
}

// CheckDeclared is the check of u's host against the script's declared `net` list that
// Restrict put in ctx, with the error Do returns: the offline harness, which has no allow
// list of its own, refuses the same requests the runner would for the declaration.
func CheckDeclared(ctx context.Context, u *url.URL) error {
	return checkName(ctx, nil, u.Hostname(), portOf(u))
}

// CheckAllowed is the name checks Do makes before a connection, with its errors: u's host
// against allow (the runner's --allow-net) and against the declaration Restrict put in ctx.
// An IP literal is checked against allow's IP and CIDR entries; a name's resolved address is
// not (there is no lookup). The offline harness applies the runner's list with it.
func CheckAllowed(ctx context.Context, allow *List, u *url.URL) error {
	return checkName(ctx, allow, u.Hostname(), portOf(u))
}

// checkName refuses host:port when allow (nil: not checked) or the script's declaration in
// ctx does not list it. The error's fix names every list that must change.
func checkName(ctx context.Context, allow *List, host string, port int) error {
	declared, _ := ctx.Value(restrictKey{}).(*List)
	inDeclared := declared == nil || declared.AllowsHost(host, port)
	switch {
	case allow != nil && !allow.AllowsHost(host, port) && !inDeclared:
		return &RefusedError{Host: host, Port: port, Reason: "not in " + FlagName + " nor in the script's net declaration",
			Fix: "add it to both: the runner's " + FlagName + " and the script's net declaration"}
	case allow != nil && !allow.AllowsHost(host, port):
		return &RefusedError{Host: host, Port: port, Reason: "not in " + FlagName, Fix: "allow it with the runner's " + FlagName}
	case !inDeclared:
		return &RefusedError{Host: host, Port: port, Reason: "not in the script's net declaration",
			Fix: "add it to the script's net: [...]; the runner's " + FlagName + " must allow it too"}
	}
	return nil
}

func portOf(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	return c.checkURL(req.Context(), req.URL)
}

func (c *Client) pickProxy(req *http.Request) (*url.URL, error) {
	u, err := c.proxy(req)
	if u != nil {
		c.proxies.Store(u.Host, true)
		if u.Port() == "" {
			c.proxies.Store(net.JoinHostPort(u.Hostname(), strconv.Itoa(portOf(u))), true)
		}
	}
	return u, err
}

// dial connects to addr; ControlContext checks every address actually dialled.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: c.limits.Timeout, KeepAlive: 30 * time.Second}
	if _, proxy := c.proxies.Load(addr); !proxy {
		d.ControlContext = c.control
	}
	if c.lookup == nil {
		return d.DialContext(ctx, network, addr)
	}
	return c.dialLookup(ctx, d, network, addr)
}

func (c *Client) dialLookup(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := c.lookup(ctx, host)
	if err != nil {
		return nil, &net.DNSError{Err: err.Error(), Name: host, IsNotFound: true}
	}
	var last error = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, last
}

// control refuses a connection to an address the list does not allow, before it is made.
func (c *Client) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("check address %q: %w", address, err)
	}
	if !c.allow.AllowsDial(ap.Addr(), int(ap.Port())) {
		return &RefusedError{Host: ap.Addr().Unmap().String(), Port: int(ap.Port()), Resolved: true,
			Reason: "a loopback, private, link-local or metadata address not covered by an IP or CIDR in " + FlagName,
			Fix:    "allow that address with an IP or CIDR entry in the runner's " + FlagName}
	}
	return nil
}

// RefusedError is a request the allow list refused.
type RefusedError struct {
	Host     string
	Port     int
	Resolved bool // the address a name resolved to (or a redirect led to) was refused
	Reason   string
	// Fix says what allows the request: the runner's flag, the script's declaration, or both.
	Fix string
}

func (e *RefusedError) Error() string {
	what := "host"
	if e.Resolved {
		what = "address"
	}
	return fmt.Sprintf("connection to %s %s refused: %s (%s)",
		what, net.JoinHostPort(e.Host, strconv.Itoa(e.Port)), e.Reason, e.Fix)
}

// ErrBodyTooLarge is a body over its limit.
var ErrBodyTooLarge = errors.New("body too large")

// scrub replaces Go's *url.Error, whose text quotes the whole URL (query and all), by one
// naming the host only, keeping the cause for errors.Is/As.
func scrub(host string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &RequestError{Host: host, Err: ue.Err}
	}
	return &RequestError{Host: host, Err: err}
}

// RequestError is a failed request; its text names the host, never the path or query.
type RequestError struct {
	Host string
	Err  error
}

func (e *RequestError) Error() string { return "request to " + e.Host + ": " + e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }
