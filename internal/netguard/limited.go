package netguard

import (
	"context"
	"io"
	"net/http"
)

// Limited is a Client with a limit on the requests in flight at once: one per script, shared
// by all the runtimes of its versions, so a script has at most MaxConcurrent requests open
// whatever the number of its handlers running. Requests over the limit wait for a slot
// (within their own deadline). Safe for concurrent use.
type Limited struct {
	*Client
	slots chan struct{}
}

// Limited returns a new limiter over c's transport (connections stay pooled by c).
func (c *Client) Limited() *Limited {
	return &Limited{Client: c, slots: make(chan struct{}, c.limits.MaxConcurrent)}
}

// Do waits for a slot, then sends req as Client.Do does; the slot is held until the body is
// closed.
func (l *Limited) Do(req *http.Request) (*http.Response, error) {
	select {
	case l.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, &RequestError{Host: req.URL.Host, Err: context.Cause(req.Context())}
	}
	resp, err := l.Client.Do(req)
	if err != nil {
		<-l.slots
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, release: func() { <-l.slots }}
	return resp, nil
}

// releaseBody releases the slot once, when closed; a body is closed by one goroutine.
type releaseBody struct {
	ReadCloser io.ReadCloser
	release    func()
	done       bool
}

func (b *releaseBody) Read(p []byte) (int, error) { return b.ReadCloser.Read(p) }

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	if !b.done {
		b.done = true
		b.release()
	}
	return err
}
