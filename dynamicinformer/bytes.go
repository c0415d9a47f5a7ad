package dynamicinformer

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
)

// Bytes received per informer (Health.BytesReceived): every list, watch, streaming list and
// partition probe of an informer runs with a context carrying the informer's counter
// (withByteCounter), and NewClient's transport (countBodies) counts what each such request's
// response body yields as it is read. The count is of the bodies as the decoder reads them:
// after HTTP decompression (the API server compresses large lists when asked; watches are not
// compressed), without headers or HTTP/2 framing. One atomic add per Read, on the goroutine
// that reads. A client other than NewClient's counts nothing.

// byteCounterKey is the context key of an informer's counter.
type byteCounterKey struct{}

// withByteCounter returns ctx carrying n: the bodies of the requests made with it are counted
// into n. A nil n returns ctx as it is.
func withByteCounter(ctx context.Context, n *atomic.Uint64) context.Context {
	if n == nil {
		return ctx
	}
	return context.WithValue(ctx, byteCounterKey{}, n)
}

// countBodies wraps rt so that the response body of a request whose context carries a
// counter (withByteCounter) adds the bytes read from it to that counter.
func countBodies(rt http.RoundTripper) http.RoundTripper { return bodyCounter{rt: rt} }

type bodyCounter struct{ rt http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (c bodyCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if n, ok := req.Context().Value(byteCounterKey{}).(*atomic.Uint64); ok {
		resp.Body = &countedBody{ReadCloser: resp.Body, n: n}
	}
	return resp, nil
}

// WrappedRoundTripper lets client-go find the transport underneath (to cancel requests and
// close idle connections).
func (c bodyCounter) WrappedRoundTripper() http.RoundTripper { return c.rt }

// countedBody is a response body that adds what is read from it to n.
type countedBody struct {
	io.ReadCloser
	n *atomic.Uint64
}

// Read implements io.Reader.
func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.n.Add(uint64(n))
	}
	return n, err
}
