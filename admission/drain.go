package admission

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// A stop over HTTP/1.1 without a failed request. kube-apiserver keeps idle keep-alive
// connections to the webhook and sends a review on one the moment it has one; a server that
// closes an idle connection (http.Server.Shutdown does, at once) races with that send, and
// the API server does not retry a POST it has begun to write: under load the race is lost
// within a few requests (TestTwoReplicasServeAdmission saw it). So Serve first drains: it
// stops accepting, answers every request with "Connection: close" so the API server drops
// each connection after its answer, and only then closes what is left, once every
// connection is gone or after MaxDrain. HTTP/2 needs none of this: Shutdown's GOAWAY tells
// the client before anything is closed.

// MaxDrain bounds the drain: connections the API server has not used since it began (idle
// in its pool, and at the bottom of it, since its pool hands out the most recently used
// first) are closed then.
const MaxDrain = time.Second

// drain counts a server's connections, closes those beyond its maximum and marks its
// answers while it stops. Its methods are safe from any goroutine: connState runs on
// net/http's, wrap's handler on the requests'.
type drain struct {
	max    int
	logger *slog.Logger
	// closeAnswers is set from the shutdown delay on: every answer says "Connection: close".
	closeAnswers atomic.Bool
	draining     atomic.Bool
	refused      atomic.Int64
	mu           sync.Mutex
	open         int           // every connection accepted and not closed yet, refused ones included
	gone         chan struct{} // closed once draining with no connection open
	goneOnce     sync.Once
}

func newDrain(max int, logger *slog.Logger) *drain {
	return &drain{max: max, logger: logger, gone: make(chan struct{})}
}

// connState is the server's http.Server.ConnState. A connection beyond max is closed as it
// is accepted (on the Serve goroutine, before its TLS handshake); it counts until net/http
// reports it closed.
func (d *drain) connState(conn net.Conn, state http.ConnState) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch state {
	case http.StateNew:
		if d.open++; d.open > d.max {
			_ = conn.Close()
			if d.refused.Add(1)%1000 == 1 { // the first, and then one in a thousand
				d.logger.Warn("admission server: too many connections; closing new ones until some end",
					"max", d.max, "refused", d.refused.Load(), "remote", conn.RemoteAddr().String())
			}
		}
	case http.StateClosed, http.StateHijacked:
		d.open--
		d.closeIfGone()
	}
}

// closeIfGone closes gone when draining and no connection is open; called with mu held.
func (d *drain) closeIfGone() {
	if d.open == 0 && d.draining.Load() {
		d.goneOnce.Do(func() { close(d.gone) })
	}
}

// wrap is h, answering with "Connection: close" once draining or in the shutdown delay.
func (d *drain) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.draining.Load() || d.closeAnswers.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// run drains: ln closed (the caller's Serve returns, and no connection is accepted any
// more), then it waits until no connection is open or max has passed.
func (d *drain) run(ln net.Listener, max time.Duration) {
	d.draining.Store(true)
	_ = ln.Close()
	d.mu.Lock()
	d.closeIfGone()
	d.mu.Unlock()
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-d.gone:
	case <-t.C:
	}
}
