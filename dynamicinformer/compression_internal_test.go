package dynamicinformer

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"testing"

	"k8s.io/client-go/rest"
)

func TestSameMachine(t *testing.T) {
	t.Parallel()
	own := func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("10.1.2.3"), Mask: net.CIDRMask(24, 32)},
			&net.IPNet{IP: net.ParseIP("fd00::7"), Mask: net.CIDRMask(64, 128)}}, nil
	}
	failing := func() ([]net.Addr, error) { return nil, errors.New("no interfaces") }
	proxy := func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy:3128") }
	noEnvProxy := func(*http.Request) (*url.URL, error) { return nil, nil }
	envProxy := func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy:3128") }
	for _, tc := range []struct {
		name  string
		cfg   *rest.Config
		addrs func() ([]net.Addr, error)
		want  bool
		env   func(*http.Request) (*url.URL, error)
	}{
		{"loopback v4", &rest.Config{Host: "https://127.0.0.1:6443"}, own, true, nil},
		{"loopback elsewhere in 127/8", &rest.Config{Host: "https://127.0.1.1:6443"}, own, true, nil},
		{"loopback v6", &rest.Config{Host: "https://[::1]:6443"}, own, true, nil},
		{"localhost", &rest.Config{Host: "https://localhost:6443"}, own, true, nil},
		{"no scheme", &rest.Config{Host: "127.0.0.1:8080"}, own, true, nil},
		{"own interface", &rest.Config{Host: "https://10.1.2.3:6443"}, own, true, nil},
		{"own interface v6", &rest.Config{Host: "https://[fd00::7]:6443"}, own, true, nil},
		{"another address on the same subnet", &rest.Config{Host: "https://10.1.2.4:6443"}, own, false, nil},
		{"in-cluster service", &rest.Config{Host: "https://10.96.0.1:443"}, own, false, nil},
		{"a name is not resolved", &rest.Config{Host: "https://api.example.com"}, own, false, nil},
		{"interfaces unknown", &rest.Config{Host: "https://10.1.2.3:6443"}, failing, false, nil},
		{"through a proxy", &rest.Config{Host: "https://127.0.0.1:6443", Proxy: proxy}, own, false, nil},
		{"unparsable", &rest.Config{Host: "https://[::1"}, own, false, nil},
		{"through $HTTPS_PROXY", &rest.Config{Host: "https://10.1.2.3:6443"}, own, false, envProxy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = noEnvProxy
			}
			if got := sameMachine(tc.cfg, tc.addrs, env); got != tc.want {
				t.Fatalf("sameMachine(%q) = %v, want %v", tc.cfg.Host, got, tc.want)
			}
		})
	}
}

func TestWithCompression(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host         string
		c            Compression
		alreadyOff   bool
		wantCompress bool
	}{
		{"https://127.0.0.1:6443", CompressionAuto, false, false},
		{"https://api.example.com", CompressionAuto, false, true},
		{"https://127.0.0.1:6443", CompressionOn, false, true},
		{"https://api.example.com", CompressionOff, false, false},
		{"https://api.example.com", CompressionOn, true, false}, // the kubeconfig's choice stands
	} {
		cfg := &rest.Config{Host: tc.host, DisableCompression: tc.alreadyOff}
		out, compressed := WithCompression(cfg, tc.c)
		if compressed != tc.wantCompress || out.DisableCompression == tc.wantCompress {
			t.Errorf("WithCompression(%s, %s) compressed = %v (DisableCompression %v), want %v",
				tc.host, tc.c, compressed, out.DisableCompression, tc.wantCompress)
		}
		if cfg.DisableCompression != tc.alreadyOff {
			t.Errorf("WithCompression(%s, %s) changed its argument", tc.host, tc.c)
		}
	}
}

func TestParseCompression(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"auto", "on", "off"} {
		if c, err := ParseCompression(s); err != nil || string(c) != s {
			t.Errorf("ParseCompression(%q) = %q, %v", s, c, err)
		}
	}
	for _, s := range []string{"", "true", "gzip", "ON"} {
		if _, err := ParseCompression(s); err == nil {
			t.Errorf("ParseCompression(%q) succeeded", s)
		}
	}
}
