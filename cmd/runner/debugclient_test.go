package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentListener accepts connections and never answers, as a port-forward to a stuck pod
// does; it closes them when the test ends.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// The debug subcommands give up on a runner that does not answer, and say why; a certificate
// they do not trust gets the flags that fix it.
func TestDebugClientErrors(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(tlsSrv.Close)
	silent := silentListener(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no answer", []string{"status", "--debug-addr", silent, "--request-timeout", "300ms"}, []string{"no answer within 300ms (--request-timeout)"}},
		{"no answer to a tail", []string{"tail", "--debug-addr", silent, "--request-timeout", "300ms"}, []string{"no answer within 300ms"}},
		{"untrusted certificate", []string{"status", "--debug-addr", tlsSrv.URL}, []string{"certificate", "--certificate-authority", "--insecure-skip-tls-verify"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := execute(t, ctx, tt.args...)
			if err == nil {
				t.Fatal("succeeded, want an error")
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("gave up after %s (the test's own deadline?): %v", took, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
