package debugapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"
)

// DefaultAddr is the default --debug-addr: loopback only.
const DefaultAddr = "127.0.0.1:8089"

// Listen binds addr. When addr is the default (isDefault) and its port is taken — a second
// runner on the same machine — it binds a free loopback port instead and logs a WARN naming
// it; a taken address given explicitly is an error. An empty addr returns nil, nil (off).
func Listen(addr string, isDefault bool, logger *slog.Logger) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	l, err := net.Listen("tcp", addr)
	if err == nil {
		return l, nil
	}
	if !isDefault || !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("serve debug API on %s: %w", addr, err)
	}
	l, err2 := net.Listen("tcp", "127.0.0.1:0")
	if err2 != nil {
		return nil, fmt.Errorf("serve debug API on %s: %w (and on a free loopback port: %w)", addr, err, err2)
	}
	logger.Warn("debug API: the default address is in use (another runner?); serving on a free loopback port instead",
		"default", addr, "debug_addr", l.Addr().String())
	return l, nil
}

// IsLoopback reports whether addr (host:port) names only this machine: a loopback IP or
// "localhost". An empty host (all interfaces) is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
