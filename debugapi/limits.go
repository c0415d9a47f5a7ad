package debugapi

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound what clients may hold of the server, so that a client (authenticated or not)
// cannot pin connections, goroutines or trace subscriptions forever. Zero fields take the
// defaults below.
type Limits struct {
	// MaxConns bounds the open connections; one more is closed as soon as it is accepted.
	MaxConns int
	// MaxTails bounds the /debug/tail streams; one more is answered 503. Each holds a
	// subscription with a 1,024-record buffer that the recorder offers every record to under
	// its lock.
	MaxTails int
	// ReadTimeout bounds reading one request, body included; IdleTimeout how long a kept-alive
	// connection may wait for its next request (a 401 answered, the client may not hold the
	// connection); WriteTimeout bounds writing one answer. Streams (tail, the page's events)
	// are exempt from ReadTimeout and WriteTimeout: each write of theirs gets StreamWrite.
	ReadTimeout, IdleTimeout, WriteTimeout, StreamWrite time.Duration
}

// The default Limits. WriteTimeout leaves room for a pprof profile (30s by default) and a
// replay that waits for the events queued before it.
const (
	DefaultMaxConns     = 64
	DefaultMaxTails     = 16
	DefaultReadTimeout  = 30 * time.Second
	DefaultIdleTimeout  = 60 * time.Second
	DefaultWriteTimeout = 2 * time.Minute
	DefaultStreamWrite  = time.Minute
	readHeaderTimeout   = 5 * time.Second
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxConns, DefaultMaxConns)
	def(&l.MaxTails, DefaultMaxTails)
	defDur(&l.ReadTimeout, DefaultReadTimeout)
	defDur(&l.IdleTimeout, DefaultIdleTimeout)
	defDur(&l.WriteTimeout, DefaultWriteTimeout)
	defDur(&l.StreamWrite, DefaultStreamWrite)
	return l
}

// connLimit counts the server's connections through http.Server.ConnState and closes those
// beyond max at once. It works beneath TLS (the hook sees the *tls.Conn before its handshake).
type connLimit struct {
	max    int
	logger *slog.Logger

	mu      sync.Mutex
	open    map[net.Conn]bool // counted connections
	refused atomic.Int64
}

func newConnLimit(max int, logger *slog.Logger) *connLimit {
	return &connLimit{max: max, logger: logger, open: map[net.Conn]bool{}}
}

// track is the http.Server's ConnState hook; it runs on the Serve goroutine for StateNew.
func (c *connLimit) track(conn net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		c.mu.Lock()
		full := len(c.open) >= c.max
		if !full {
			c.open[conn] = true
		}
		c.mu.Unlock()
		if full {
			_ = conn.Close()
			if c.refused.Add(1) == 1 {
				c.logger.Warn("debug API: too many connections; closing new ones until some end", "max", c.max,
					"remote", conn.RemoteAddr().String())
			}
		}
	case http.StateClosed, http.StateHijacked:
		c.mu.Lock()
		delete(c.open, conn)
		c.mu.Unlock()
	default:
	}
}

// tailSlots bounds the tail streams.
type tailSlots struct {
	max int
	n   atomic.Int64
}

// take reserves a slot; false when all are taken. A taken slot is given back with put.
func (s *tailSlots) take() bool {
	if s.n.Add(1) > int64(s.max) {
		s.n.Add(-1)
		return false
	}
	return true
}

func (s *tailSlots) put() { s.n.Add(-1) }

// streaming exempts a long-lived answer from the server's ReadTimeout (which, once it fires,
// would cancel the request's context) and WriteTimeout; each write then gets its own deadline
// (extend), so a client that stops reading frees its goroutine and subscription.
type streaming struct {
	rc *http.ResponseController
	d  time.Duration
}

func newStreaming(w http.ResponseWriter, d time.Duration) streaming {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	s := streaming{rc: rc, d: d}
	s.extend()
	return s
}

func (s streaming) extend() { _ = s.rc.SetWriteDeadline(time.Now().Add(s.d)) }
