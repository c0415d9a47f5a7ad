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
	var held int64
	release = func() { budget.put(held) }
	if r.ContentLength > limit {
		return nil, release, refuse(http.StatusRequestEntityTooLarge, "request body over %d bytes (Content-Length %d)", limit, r.ContentLength)
	}
	buf := make([]byte, 0, min(initialBodyBytes, limit+1))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, release, refuse(http.StatusRequestEntityTooLarge, "request body over %d bytes", limit)
			}
			next := min(2*int64(cap(buf)), limit+1) // one byte over the limit tells a larger body
			if need := max(next-SmallBodyBytes, 0) - held; need > 0 {
				if !budget.take(need) {
					return nil, release, refuse(http.StatusServiceUnavailable,
						"request bodies in memory over %d bytes: the admission server is busy", budget.max)
				}
				held += need
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, release, nil
		}
		if err != nil {
			return nil, release, refuse(http.StatusBadRequest, "read the request body: %v", err)
		}
	}
}
