package dynamicinformer

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// Compression says whether clients ask the API server to gzip its responses (Go's transport
// sends "Accept-Encoding: gzip" unless told not to, and kube-apiserver then compresses every
// response over 128 KB, at gzip level 1, on the goroutine that encodes it).
type Compression string

const (
	// CompressionAuto asks for compressed responses unless the API server is on this machine
	// (SameMachine): there, compressing saves no network and costs CPU on both ends.
	CompressionAuto Compression = "auto"
	// CompressionOn asks for compressed responses, as client-go does by default.
	CompressionOn Compression = "on"
	// CompressionOff asks for responses as they are.
	CompressionOff Compression = "off"
)

// ParseCompression reads "auto", "on" or "off".
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(s); c {
	case CompressionAuto, CompressionOn, CompressionOff:
		return c, nil
	}
	return "", fmt.Errorf("parse compression %q: want auto, on or off", s)
}

// WithCompression returns a copy of cfg whose clients ask for compressed responses as c says,
// and whether they do. It only sets cfg.DisableCompression, which client-go's transport and
// WithConnectionHealth's honour; a cfg that already disables compression stays so.
func WithCompression(cfg *rest.Config, c Compression) (_ *rest.Config, compressed bool) {
	out := rest.CopyConfig(cfg)
	switch c {
	case CompressionOff:
		out.DisableCompression = true
	case CompressionAuto:
		if SameMachine(cfg) {
			out.DisableCompression = true
		}
	}
	return out, !out.DisableCompression
}

// SameMachine reports whether cfg reaches an API server on this machine, directly: its host
// is "localhost", a loopback address or an address of one of this machine's interfaces, and
// no proxy stands between (cfg.Proxy, or $HTTPS_PROXY/$HTTP_PROXY for that host). Host names
// other than localhost are not resolved: they count as another machine, so a misjudgement
// only ever leaves compression on. A tunnel to a remote cluster on a local port (ssh -L) looks
// local; use CompressionOn there.
func SameMachine(cfg *rest.Config) bool {
	return sameMachine(cfg, net.InterfaceAddrs, http.ProxyFromEnvironment)
}

func sameMachine(cfg *rest.Config, interfaceAddrs func() ([]net.Addr, error), envProxy func(*http.Request) (*url.URL, error)) bool {
	u, err := serverURL(cfg.Host)
	if err != nil || cfg.Proxy != nil {
		return false
	}
	if proxy, err := envProxy(&http.Request{URL: u}); err != nil || proxy != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := interfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// serverURL parses a rest.Config's Host, which may lack a scheme ("127.0.0.1:6443").
func serverURL(host string) (*url.URL, error) {
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("parse server address: %w", err)
	}
	return u, nil
}
