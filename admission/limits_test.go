package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// attack is a set of hostile connections to a server, each read until the server closes it.
type attack struct {
	addr      string
	clientTLS *tls.Config
	conns     []net.Conn
	slow      []net.Conn     // TLS connections trickling a body
	sent      atomic.Int64   // body bytes the slow ones have sent
	closed    sync.WaitGroup // one per connection: done once the server has closed it
}

// open dials one connection, over TLS unless raw, writes head on it and reads it until the
// server closes it.
func (a *attack) open(t *testing.T, raw bool, head string) net.Conn {
	t.Helper()
	var conn net.Conn
	var err error
	if raw {
		conn, err = net.Dial("tcp", a.addr)
	} else {
		conn, err = tls.Dial("tcp", a.addr, a.clientTLS)
	}
	if err != nil {
		t.Fatalf("dial a hostile connection: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if head != "" {
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatalf("write a hostile request: %v", err)
		}
	}
	a.conns = append(a.conns, conn)
	a.closed.Go(func() { _, _ = io.Copy(io.Discard, conn) })
	return conn
}

// trickle writes 1 KiB to every slow connection each 50 ms until ctx ends or it fails.
func (a *attack) trickle(ctx context.Context) {
	chunk := bytes.Repeat([]byte("x"), 1024)
	for {
		for _, c := range a.slow {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			if n, err := c.Write(chunk); err == nil {
				a.sent.Add(int64(n))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func postHead(path string, contentLength int64) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, contentLength)
}

// A few hundred stalled and slow clients, some declaring 7 MiB or a terabyte of body, hold
// the heap to what they have sent (not to what they declared) and are closed by the
// server's timeouts, while genuine reviews keep being answered in time. Before the limits,
// each slow body allocated its declared 7 MiB at once (700 MiB here) and every connection
// stayed open as long as its client wished. Not parallel: it measures the process's heap.
func TestServerHoldsStalledAndSlowClientsWithinBounds(t *testing.T) {
	lim := Limits{ReadHeaderTimeout: time.Second, ReadTimeout: 6 * time.Second}
	ts := serveTLS(t, Config{Limits: lim}, time.Second)
	t.Cleanup(func() { ts.stop(t) })
	before := liveHeap()
	a := &attack{addr: ts.ln.Addr().String(), clientTLS: ts.clientTLS}
	const stalled, slow, huge, halfHeaders = 100, 100, 50, 50
	for range stalled {
		a.open(t, true, "") // no TLS handshake at all
	}
	for range slow {
		a.slow = append(a.slow, a.open(t, false, postHead("/validate/p.js", DefaultMaxBodyBytes)))
	}
	for range huge {
		a.open(t, false, postHead("/validate/p.js", 1<<40)+"{")
	}
	for range halfHeaders {
		a.open(t, false, "POST /validate/p.js HTTP/1.1\r\nHost: x\r\nContent-Le")
	}
	ctx, stop := context.WithCancel(t.Context())
	var trickling sync.WaitGroup
	trickling.Go(func() { a.trickle(ctx) })
	defer trickling.Wait()
	defer stop()

	genuine := genuineReviews(t, ts, 2*time.Second)
	// Measured once the slow bodies have sent 4 KiB each: each handler has started reading.
	for deadline := time.Now().Add(10 * time.Second); a.sent.Load() < slow*4<<10; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow bodies sent %d bytes in 10s", a.sent.Load())
		}
	}
	during := liveHeap()
	grown := int64(during) - int64(before)
	// Each connection's TLS and bufio buffers, on both ends (the clients are in this
	// process), its request and what its body has sent: under 64 KiB (24 KiB measured).
	const bound = (stalled + slow + huge + halfHeaders) * 64 << 10
	t.Logf("live heap %d MiB before, %d MiB during %d hostile connections (%d KiB of slow bodies sent); bound %d MiB",
		before>>20, during>>20, len(a.conns), a.sent.Load()>>10, bound>>20)
	if grown > bound {
		t.Errorf("the live heap grew by %d MiB during the attack, over its bound of %d MiB", grown>>20, bound>>20)
	}
	for deadline := time.Now().Add(5 * time.Second); genuine.answered.Load() < 5; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d genuine reviews were answered in 5s during the attack", genuine.answered.Load())
		}
	}
	genuine.stop()
	waitClosed(t, a, lim.ReadTimeout+5*time.Second)
}

// genuine are reviews posted during an attack: answered counts those answered in time, stop
// stops them.
type genuine struct {
	answered *atomic.Int64
	stop     func()
}

// genuineReviews posts a review on a new connection every 100 ms until stopped or the test
// ends, each answered allowed within in (else the test fails).
func genuineReviews(t *testing.T, ts tlsServer, in time.Duration) genuine {
	t.Helper()
	client := &http.Client{Timeout: in, Transport: &http.Transport{TLSClientConfig: ts.clientTLS, DisableKeepAlives: true}}
	body := review(t, admissionv1.Create, "alice", configMap(nil))
	ctx, cancel := context.WithCancel(t.Context())
	answered := new(atomic.Int64)
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			start := time.Now()
			resp, err := client.Post("https://"+ts.ln.Addr().String()+"/validate/p.js", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Errorf("a genuine review during the attack: %v", err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"allowed":true`) {
				t.Errorf("a genuine review during the attack: %d %s", resp.StatusCode, b)
				return
			}
			if took := time.Since(start); took > in {
				t.Errorf("a genuine review answered in %s, over %s", took, in)
			}
			answered.Add(1)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	stop := sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stop)
	return genuine{answered: answered, stop: stop}
}

// waitClosed fails the test unless the server closes every hostile connection within max.
func waitClosed(t *testing.T, a *attack, max time.Duration) {
	t.Helper()
	closed := make(chan struct{})
	go func() { a.closed.Wait(); close(closed) }() // ends when the cleanups close the connections at the latest
	select {
	case <-closed:
	case <-time.After(max):
		t.Errorf("the server did not close the stalled and slow connections within %s", max)
	}
}

// Connections beyond MaxConnections are closed as they are accepted; once some end, new ones
// are served again.
func TestServerCapsItsConnections(t *testing.T) {
	t.Parallel()
	ts := serveTLS(t, Config{Limits: Limits{MaxConnections: 20}}, time.Second)
	t.Cleanup(func() { ts.stop(t) })
	addr := ts.ln.Addr().String()
	var held []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: ts.clientTLS, DisableKeepAlives: true}}
	body := review(t, admissionv1.Create, "alice", configMap(nil))
	postOnce := func() error {
		resp, err := client.Post("https://"+addr+"/validate/p.js", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	// The held connections may not all be accepted yet: the 21st is refused once they are.
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err = postOnce(); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("a 21st connection was served with 20 open and MaxConnections 20")
	}
	for _, c := range held {
		_ = c.Close()
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err = postOnce(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with the held connections closed, a review still fails: %v", err)
		}
	}
}

// Bodies beyond SmallBodyBytes share BodyBytesInFlight: one that does not fit while others
// hold it is refused with 503, and a small review is still answered.
func TestServerSharesABudgetForLargeBodies(t *testing.T) {
	t.Parallel()
	ts := serveTLS(t, Config{Limits: Limits{BodyBytesInFlight: 512 << 10}}, time.Second)
	t.Cleanup(func() { ts.stop(t) })
	a := &attack{addr: ts.ln.Addr().String(), clientTLS: ts.clientTLS}
	big := bytes.Repeat([]byte("x"), 400<<10) // its buffer doubles to 512 KiB: 448 KiB of the budget
	holder := a.open(t, false, postHead("/validate/p.js", 1<<20))
	if _, err := holder.Write(big); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: ts.clientTLS}}
	defer client.CloseIdleConnections()
	var status int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// 200 KiB: refused at 128 KiB read, the rest small enough for net/http to read away.
		resp, err := client.Post("https://"+a.addr+"/validate/p.js", "application/json", bytes.NewReader(big[:200<<10]))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if status = resp.StatusCode; status == http.StatusServiceUnavailable {
			break
		}
	}
	if status != http.StatusServiceUnavailable {
		t.Errorf("a large body while another holds the budget: %d, want 503", status)
	}
	status, _, b := postTLS(t, client, "https://"+a.addr+"/validate/p.js", review(t, admissionv1.Create, "alice", configMap(nil)))
	if status != http.StatusOK {
		t.Errorf("a small review while the budget is held: %d %s", status, b)
	}
}

// postTLS posts body with client: the status, whether the answer closes its connection
// ("Connection: close", which the client takes out of the header) and the body.
func postTLS(t *testing.T, client *http.Client, url string, body []byte) (status int, closes bool, b []byte) {
	t.Helper()
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Close, b
}
