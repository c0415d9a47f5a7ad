package debugapi_test

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/jsinformer/jsinformer/debugapi"
)

func busy(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l.Addr().String()
}

// The default address falls back to a free loopback port with a WARN; an explicit one fails.
func TestListenFallback(t *testing.T) {
	t.Parallel()
	addr := busy(t)
	var log bytes.Buffer
	l, err := debugapi.Listen(addr, true, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatalf("default address taken: %v, want a fallback", err)
	}
	defer func() { _ = l.Close() }()
	got := l.Addr().String()
	if got == addr || !debugapi.IsLoopback(got) {
		t.Errorf("fallback listens on %s, want another loopback port than %s", got, addr)
	}
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "debug_addr="+got) {
		t.Errorf("fallback log %q: want a WARN naming %s", log.String(), got)
	}
	if _, err := debugapi.Listen(addr, false, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "serve debug API on "+addr) {
		t.Errorf("explicit address taken: %v, want a start-up error", err)
	}
	if l, err := debugapi.Listen("", true, nil); l != nil || err != nil {
		t.Errorf("empty address: %v %v, want off", l, err)
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:8089": true, "localhost:1": true, "[::1]:8089": true, "127.0.0.2:80": true,
		":8089": false, "0.0.0.0:8089": false, "10.0.0.1:8089": false, "example.com:80": false, "nonsense": false,
	} {
		if got := debugapi.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
