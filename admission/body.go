package admission

import (
	"io"
	"net/http"
	"sync/atomic"
)

// Reading a request body into memory only as fast as it arrives. The buffer starts small and
// doubles as it fills, never sized from the Content-Length the client declares (a client may
// declare 7 MiB and send nothing), so a connection holds what it has sent, at most
// MaxBodyBytes. Beyond SmallBodyBytes a body takes its growth from a budget the server's
// requests share (Limits.BodyBytesInFlight), so many large bodies sent slowly hold that
// budget at most.

// initialBodyBytes is a body buffer's first size: an ordinary review fits in one read.
const initialBodyBytes = 16 << 10

// bodyBudget is the bytes of request bodies held beyond SmallBodyBytes each, shared by a
// server's requests; safe from any goroutine.
type bodyBudget struct {
	max  int64
	used atomic.Int64
}

// take reserves n bytes; false, with nothing reserved, when that would exceed max.
func (b *bodyBudget) take(n int64) bool {
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *bodyBudget) put(n int64) { b.used.Add(-n) }

// readBody reads r's body whole, at most limit bytes: 413 when its Content-Length or what
// arrives is larger, 503 when its growth beyond SmallBodyBytes does not fit in budget. release
// gives back what the body took of budget; call it once the body is no longer used (also
// after an error).
func readBody(r *http.Request, limit int64, budget *bodyBudget) (body []byte, release func(), err error) {
	b := &bodyBuffer{limit: limit, budget: budget}
	if r.ContentLength > limit {
		return nil, b.release, refuse(http.StatusRequestEntityTooLarge, "request body over %d bytes (Content-Length %d)", limit, r.ContentLength)
	}
	b.buf = make([]byte, 0, min(initialBodyBytes, limit+1))
	for {
		if len(b.buf) == cap(b.buf) {
			if err := b.grow(); err != nil {
				return nil, b.release, err
			}
		}
		n, err := r.Body.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+n]
		if err == io.EOF {
			return b.buf, b.release, nil
		}
		if err != nil {
			return nil, b.release, refuse(http.StatusBadRequest, "read the request body: %v", err)
		}
	}
}

// bodyBuffer is a body being read and what it holds of its budget.
type bodyBuffer struct {
	buf    []byte
	limit  int64
	budget *bodyBudget
	held   int64
}

// grow doubles the full buffer, up to one byte over the limit (which tells a larger body):
// 413 when it is already past the limit, 503 when its growth beyond SmallBodyBytes does not
// fit in the budget.
func (b *bodyBuffer) grow() error {
	if int64(len(b.buf)) > b.limit {
		return refuse(http.StatusRequestEntityTooLarge, "request body over %d bytes", b.limit)
	}
	next := min(2*int64(cap(b.buf)), b.limit+1)
	if need := max(next-SmallBodyBytes, 0) - b.held; need > 0 {
		if !b.budget.take(need) {
			return refuse(http.StatusServiceUnavailable, "request bodies in memory over %d bytes: the admission server is busy", b.budget.max)
		}
		b.held += need
	}
	grown := make([]byte, len(b.buf), next)
	copy(grown, b.buf)
	b.buf = grown
	return nil
}

// release gives back what the body holds of its budget.
func (b *bodyBuffer) release() { b.budget.put(b.held) }
