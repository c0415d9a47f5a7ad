package dynamicinformer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Lists over HTTP/1.1. An informer's initial LIST is one long response of every object of a
// resource. Served over HTTP/2, it cost kube-apiserver v1.34.4 twice the memory of the same
// LIST over HTTP/1.1 (peak +100 MB against +54 MB for 20,000 Deployments, the server's own
// figures, docs/benchmarks.md), and no more on v1.37; the runner's own time is the same
// either way. So a list goes over a connection of its own, HTTP/1.1, closed when the list
// ends (lists are rare: at start and after "410 Gone"), while watches and every other
// request share the HTTP/2 connection and its PING health check.
//
// An HTTP/1.1 connection has no PING, so a hung API server is noticed otherwise: the dial
// and TLS handshake are bounded (a frozen process completes no handshake), the response
// headers must come within listHeaderTimeout, and the body may stay silent no longer than
// the connection health check's read-idle and ping timeouts together, as an HTTP/2
// connection may; a list cut so fails with errListStalled and is retried.

// listHeaderTimeout bounds the wait for a list's response headers: longer than any list's
// first byte (a list the watch cache cannot serve is read from etcd whole before the first
// byte), shorter than leaving a hung API server unnoticed for good.
const listHeaderTimeout = time.Minute

// errListStalled is the error of a list whose response stopped arriving.
var errListStalled = errors.New("the list's response stopped arriving (the API server may be hung)")

type http1Key struct{}

// overHTTP1 marks ctx so that a request made with it goes over an HTTP/1.1 connection of its
// own, through a transport WithConnectionHealth built.
func overHTTP1(ctx context.Context) context.Context { return context.WithValue(ctx, http1Key{}, true) }

// listRouter sends the requests overHTTP1 marked through h1, the others through h2.
type listRouter struct {
	h2, h1 http.RoundTripper
	idle   time.Duration // a list body silent this long is cut; never when not positive
}

// RoundTrip implements http.RoundTripper.
func (r listRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Context().Value(http1Key{}) == nil {
		return r.h2.RoundTrip(req)
	}
	if r.idle <= 0 {
		return r.h1.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := r.h1.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = newIdleBody(resp.Body, r.idle, cancel)
	return resp, nil
}

// idleBody is a response body cut when no byte arrives for idle: its request's context is
// cancelled, which closes the connection.
type idleBody struct {
	io.ReadCloser
	idle    time.Duration
	timer   *time.Timer
	stalled atomic.Bool
	cancel  context.CancelCauseFunc
}

func newIdleBody(body io.ReadCloser, idle time.Duration, cancel context.CancelCauseFunc) *idleBody {
	b := &idleBody{ReadCloser: body, idle: idle, cancel: cancel}
	b.timer = time.AfterFunc(idle, func() {
		b.stalled.Store(true)
		cancel(errListStalled)
	})
	return b
}

// Read implements io.Reader; each byte received restarts the idle clock.
func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF && b.stalled.Load() {
		err = fmt.Errorf("read list: %w (nothing for %s)", errListStalled, b.idle)
	}
	return n, err
}

// Close implements io.Closer.
func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

// http1Transport is t for lists: HTTP/1.1 only, a connection per request, headers within
// listHeaderTimeout.
func http1Transport(t *http.Transport) *http.Transport {
	h1 := t.Clone() // after t's HTTP/2 settings: Clone fixes t's protocols
	h1.ForceAttemptHTTP2 = false
	h1.HTTP2 = nil
	h1.Protocols = new(http.Protocols)
	h1.Protocols.SetHTTP1(true)
	h1.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	h1.DisableKeepAlives = true
	h1.ResponseHeaderTimeout = listHeaderTimeout
	if h1.TLSClientConfig != nil {
		h1.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	return h1
}
