package admission

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"
)

// What a client may hold of the server, so that one that reaches the port (authenticated or
// not) cannot pin its connections, goroutines or memory: a bound on the open connections, on
// how long each may take to send a request and stay idle, and on the request bodies held in
// memory (body.go). docs/admission.md states the memory bound they give.

// Limits bound the server's connections and request bodies. Zero fields take the defaults
// below.
type Limits struct {
	// MaxConnections bounds the open connections: one more is closed as soon as it is
	// accepted, before its TLS handshake.
	MaxConnections int
	// ReadHeaderTimeout bounds the TLS handshake and the request's headers; ReadTimeout the
	// whole request, body included; WriteTimeout the time from the headers read to the answer
	// written (the scripts' time included); IdleTimeout how long a kept-alive connection may
	// wait for its next request.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxBodyBytes bounds one request body: a larger one is refused with 413, before it is
	// read when its Content-Length says so.
	MaxBodyBytes int64
	// BodyBytesInFlight bounds the bytes of request bodies held at once beyond SmallBodyBytes
	// each: a body that would take more while others hold the rest is refused with 503.
	BodyBytesInFlight int64
}

// The default Limits. ReadTimeout and WriteTimeout cover the longest webhook timeout the API
// server allows (30 s). IdleTimeout is longer than the API server's own idle timeout for its
// webhook connections (90 s, client-go's transport default), so that the API server, not the
// runner, closes an idle connection: a server closing one races with the API server's next
// review on it, which the API server does not retry (drain.go).
const (
	DefaultMaxConnections    = 1024
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 40 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	// DefaultMaxBodyBytes bounds an AdmissionReview request body: the API server's own
	// request limit is 3 MiB, and a review carries an UPDATE's object twice, with some JSON
	// around it.
	DefaultMaxBodyBytes      = 7 << 20
	DefaultBodyBytesInFlight = 64 << 20
	// SmallBodyBytes of each body are read without taking from BodyBytesInFlight: a review of
	// an ordinary object is never refused because large ones fill the budget.
	SmallBodyBytes = 64 << 10
	// maxHeaderBytes bounds a request's headers (net/http answers 431 beyond): the API server
	// sends a path and a few short headers; net/http's default is 1 MiB.
	maxHeaderBytes = 64 << 10
)

// ReadHeaderTimeout is DefaultReadHeaderTimeout, kept under its earlier name.
const ReadHeaderTimeout = DefaultReadHeaderTimeout

// WithDefaults is l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.ReadTimeout, DefaultReadTimeout)
	def(&l.WriteTimeout, DefaultWriteTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.BodyBytesInFlight <= 0 {
		l.BodyBytesInFlight = DefaultBodyBytesInFlight
	}
	return l
}

// HTTPServer is the http.Server Serve runs h on (a Server, or a handler around one), with the
// default Limits' timeouts: over TLS, HTTP/1.1 only unless http2. Over HTTP/1.1 a handler
// reads its review from the connection on its own goroutine; over HTTP/2 the connection's
// one goroutine reads every stream's frames and hands each body over, and a handler that
// starts on the headers waits for that goroutine to be scheduled (kube-apiserver sends all
// its reviews on one connection): 60-90 µs of the runner's p50 per review
// (docs/benchmarks.md). HTTP/1.1 only is also what controller-runtime's webhook servers
// default to since HTTP/2's rapid-reset attacks (CVE-2023-44487). A stop over HTTP/1.1 needs
// a drain (drain.go); Serve does it.
func HTTPServer(h http.Handler, tlsConfig *tls.Config, http2 bool, logger *slog.Logger) *http.Server {
	return newHTTPServer(h, tlsConfig, http2, logger, Limits{}.WithDefaults())
}

func newHTTPServer(h http.Handler, tlsConfig *tls.Config, http2 bool, logger *slog.Logger, lim Limits) *http.Server {
	srv := &http.Server{Handler: h, TLSConfig: tlsConfig, MaxHeaderBytes: maxHeaderBytes,
		ReadHeaderTimeout: lim.ReadHeaderTimeout, ReadTimeout: lim.ReadTimeout, WriteTimeout: lim.WriteTimeout, IdleTimeout: lim.IdleTimeout,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug), Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(http2)
	return srv
}
