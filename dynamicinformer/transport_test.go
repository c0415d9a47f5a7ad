package dynamicinformer_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/dynamicinformer"
)

// freezer is a TCP proxy whose piping can be stopped, as a frozen server looks from the
// client: connections stay open, nothing comes back.
type freezer struct {
	l      net.Listener
	target string
	wg     sync.WaitGroup
	frozen chan struct{}
	once   sync.Once

	mu    sync.Mutex
	conns []net.Conn
}

func startFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{l: l, target: target, frozen: make(chan struct{})}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(func() {
		_ = l.Close()
		f.freeze()
		f.mu.Lock()
		for _, c := range f.conns {
			_ = c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *freezer) freeze() { f.once.Do(func() { close(f.frozen) }) }

func (f *freezer) accept() {
	defer f.wg.Done()
	for {
		c, err := f.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", f.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		f.mu.Lock()
		f.conns = append(f.conns, c, up)
		f.mu.Unlock()
		f.wg.Add(2)
		go f.pipe(c, up)
		go f.pipe(up, c)
	}
}

// pipe copies until frozen; then it stops reading, leaving the connection open.
func (f *freezer) pipe(dst, src net.Conn) {
	defer f.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-f.frozen:
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// A connection that stops answering is closed after the read-idle and ping timeouts, and the
// request on it fails with the error the watch proxy recognises; without the check it would
// wait for the kernel (minutes).
func TestConnectionHealthClosesASilentConnection(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select { // a watch with nothing to say
		case <-release:
		case <-r.Context().Done():
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	f := startFreezer(t, strings.TrimPrefix(srv.URL, "https://"))

	cfg, closeIdle, err := dynamicinformer.WithConnectionHealth(
		&rest.Config{Host: "https://" + f.l.Addr().String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
		dynamicinformer.ConnectionHealth{ReadIdleTimeout: 200 * time.Millisecond, PingTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeIdle()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+"/watch", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.ProtoMajor != 2 {
		t.Fatalf("protocol %s, want HTTP/2", resp.Proto)
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); done <- err }()
	select { // answered pings keep a silent stream open, well past the timeouts
	case err := <-done:
		t.Fatalf("the stream ended while the server answered: %v", err)
	case <-time.After(time.Second):
	}
	frozen := time.Now()
	f.freeze()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "client connection lost") {
			t.Fatalf("read ended with %v, want the connection lost", err)
		}
		t.Logf("closed %v after the freeze", time.Since(frozen).Round(10*time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("the silent connection is still open after 10s")
	}
}
