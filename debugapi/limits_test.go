package debugapi_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/inspection"
)

// dial opens a raw connection to addr.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// request sends one keep-alive request on c and reads its answer's status.
func request(t *testing.T, c net.Conn, r *bufio.Reader, path string) int {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// closedByServer reports whether the server closes c within 5s (a read gets EOF or a reset,
// not a timeout).
func closedByServer(t *testing.T, c net.Conn, r io.Reader) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := r.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

// A client that got its 401 cannot keep the connection idle, nor hold one open by sending a
// body that never comes; connections beyond MaxConns are closed at once, and a slot frees
// when a connection ends.
func TestLimitsConnections(t *testing.T) {
	t.Parallel()
	limits := debugapi.Limits{MaxConns: 2, IdleTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond}
	// A server per case: a connection of one case may still count while its server notices
	// its end.
	start := func(t *testing.T) string {
		return serve(t, debugapi.Options{Source: &fakeSource{}, Auth: denyAll{}, Limits: limits})
	}

	t.Run("idle after 401", func(t *testing.T) {
		addr := start(t)
		c := dial(t, addr)
		r := bufio.NewReader(c)
		if code := request(t, c, r, "/debug/status"); code != http.StatusUnauthorized {
			t.Fatalf("answered %d, want 401", code)
		}
		if !closedByServer(t, c, r) {
			t.Fatal("the server kept an idle connection open after its 401")
		}
	})
	t.Run("body never sent", func(t *testing.T) {
		addr := start(t)
		c := dial(t, addr)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.WriteString(c, "POST /debug/actions/retry HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		if !closedByServer(t, c, r) {
			t.Fatal("the server waited for the body beyond its read timeout")
		}
	})
	t.Run("at most MaxConns", func(t *testing.T) {
		addr := start(t)
		first, second := dial(t, addr), dial(t, addr)
		r1, r2 := bufio.NewReader(first), bufio.NewReader(second)
		request(t, first, r1, "/debug/status") // both accepted and counted
		request(t, second, r2, "/debug/status")
		third := dial(t, addr)
		if !closedByServer(t, third, third) {
			t.Fatal("a third connection was kept open with MaxConns 2")
		}
		_ = first.Close()
		waitFor(t, "a connection is accepted again", func() bool {
			c := dial(t, addr)
			defer func() { _ = c.Close() }()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(c, "GET /debug/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
				return false
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return false
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusUnauthorized
		})
	})
}

// openTail starts a tail stream and returns its answer (the caller closes the body).
func openTail(t *testing.T, addr string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/debug/tail", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// Tail streams: at most MaxTails at once (one more gets 503 and no subscription), a stream
// outlives ReadTimeout, and one whose client stops reading ends (its subscription closed, its
// slot free) after StreamWrite.
func TestLimitsTails(t *testing.T) {
	t.Parallel()
	src := &fakeSource{}
	limits := debugapi.Limits{MaxTails: 1, ReadTimeout: 100 * time.Millisecond, StreamWrite: 300 * time.Millisecond}
	addr := serve(t, debugapi.Options{Source: src, Loopback: true, Limits: limits})

	first := openTail(t, addr) //nolint:bodyclose // closed by openTail's cleanup
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first tail answered %d", first.StatusCode)
	}
	second := openTail(t, addr) //nolint:bodyclose // closed by openTail's cleanup
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second tail answered %d, want 503", second.StatusCode)
	}
	if n := src.open(); n != 1 {
		t.Fatalf("%d subscriptions open, want 1", n)
	}

	// Past the read timeout (the condition is time itself), the stream still delivers.
	time.Sleep(5 * limits.ReadTimeout)
	src.last().ch <- inspection.TraceRecord{Seq: 7, Script: "a.js"}
	line, err := readUntil(first.Body, "id: 7")
	if err != nil {
		t.Fatalf("the stream ended after the read timeout: %v (read %q)", err, line)
	}

	// Stop reading: the server's writes block, and StreamWrite ends the stream.
	sub := src.last()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // fills the socket buffers; ends with the test
		for {
			select {
			case sub.ch <- inspection.TraceRecord{Script: strings.Repeat("x", 4096)}:
			case <-stop:
				return
			}
		}
	}()
	waitFor(t, "the unread stream's subscription is closed", func() bool { return src.open() == 0 })
	again := openTail(t, addr) //nolint:bodyclose // closed by openTail's cleanup
	if again.StatusCode != http.StatusOK {
		t.Fatalf("a tail after the slot freed answered %d", again.StatusCode)
	}
}

// readUntil reads r until a line with want; the last line read and an error if it ends first.
func readUntil(r io.Reader, want string) (string, error) {
	sc := bufio.NewScanner(r)
	var line string
	for sc.Scan() {
		line = sc.Text()
		if strings.Contains(line, want) {
			return line, nil
		}
	}
	return line, errors.Join(io.ErrUnexpectedEOF, sc.Err())
}
