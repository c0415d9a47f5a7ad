package dynamicinformer

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// Default connection health check: a connection that has received nothing for
// DefaultReadIdleTimeout is sent an HTTP/2 PING, and closed when no answer comes within
// DefaultPingTimeout, so a hung API server is noticed within their sum (10s) rather than
// client-go's 30s+15s.
const (
	DefaultReadIdleTimeout = 5 * time.Second
	DefaultPingTimeout     = 5 * time.Second
)

// ConnectionHealth is how clients notice a silent connection: an API server that accepts
// connections and sends nothing (a hung or frozen process, a half-open connection behind a
// load balancer).
type ConnectionHealth struct {
	// ReadIdleTimeout is how long an HTTP/2 connection may stay silent before it is sent a
	// PING; PingTimeout is how long the answer may take before the connection is closed.
	// Every request on it then fails, watches end with an error, and the next request dials
	// a new connection (through a load balancer, possibly to a healthy API server).
	ReadIdleTimeout, PingTimeout time.Duration
}

// WithConnectionHealth returns a copy of cfg whose clients share one HTTP transport that
// checks its HTTP/2 connections as h says; the transport is otherwise client-go's (TLS,
// proxy, dialer and timeouts as client-go sets them, credentials and wrappers from cfg).
// client-go configures the same check only from the environment variables
// HTTP2_READ_IDLE_TIMEOUT_SECONDS and HTTP2_PING_TIMEOUT_SECONDS (30s and 15s by default);
// DISABLE_HTTP2, which it honours, is honoured here too (there is then no PING to send).
//
// Every client built from the returned config shares the transport, hence its connections,
// as client-go's transport cache would have them share; build clients from it, not from cfg.
// The transport is the caller's: closeIdle closes its idle connections (and their
// goroutines) once no client uses it any more. A cfg with its own Transport is returned as it
// is, with a closeIdle that does nothing.
func WithConnectionHealth(cfg *rest.Config, h ConnectionHealth) (_ *rest.Config, closeIdle func(), err error) {
	tc, err := cfg.TransportConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("configure transport: %w", err)
	}
	if tc.Transport != nil {
		return cfg, func() {}, nil // the caller brought its own transport; it decides about health checks
	}
	tlsConfig, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, nil, fmt.Errorf("configure transport: %w", err)
	}
	dial := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if tc.DialHolder != nil {
		dial = tc.DialHolder.Dial
	}
	proxy := http.ProxyFromEnvironment
	if tc.Proxy != nil {
		proxy = tc.Proxy
	}
	t := utilnet.SetOldTransportDefaults(&http.Transport{
		Proxy:               proxy,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25, // client-go's idleConnsPerHost
		DialContext:         dial,
		DisableCompression:  tc.DisableCompression,
	})
	if os.Getenv("DISABLE_HTTP2") == "" && allowsHTTP2(tlsConfig) {
		t.ForceAttemptHTTP2 = true
		t.HTTP2 = &http.HTTP2Config{SendPingTimeout: h.ReadIdleTimeout, PingTimeout: h.PingTimeout}
	}
	rt, err := transport.HTTPWrappersForConfig(tc, t)
	if err != nil {
		return nil, nil, fmt.Errorf("configure transport: %w", err)
	}
	return withTransport(cfg, rt), t.CloseIdleConnections, nil
}

// allowsHTTP2 is client-go's rule: HTTP/2 unless the TLS options list protocols without it.
func allowsHTTP2(c *tls.Config) bool {
	return c == nil || len(c.NextProtos) == 0 || slices.Contains(c.NextProtos, "h2")
}

// withTransport is cfg with rt as its transport and without what rt already applies (TLS,
// credentials, impersonation, wrappers, dialer, proxy): rest refuses a transport alongside
// TLS options, and would apply the rest twice.
func withTransport(cfg *rest.Config, rt http.RoundTripper) *rest.Config {
	out := rest.AnonymousClientConfig(cfg) // drops credentials, keeps TLS CA/insecure options
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.Impersonate = rest.ImpersonationConfig{}
	out.WrapTransport, out.Dial, out.Proxy = nil, nil, nil
	out.Transport = rt
	return out
}
