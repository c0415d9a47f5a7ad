package admission

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/jsinformer/jsinformer/scripting"
)

// The HTTPS server: one path per script and kind, /validate/<script> and /mutate/<script>
// (the script's name as in the scripts folder, "team-a/policy.js"), or per entry shared by
// several scripts (GroupPath), answering AdmissionReview v1 from the versions serving at
// that moment.

// Path prefixes of the two kinds of webhook.
const (
	ValidatePrefix = "/validate/"
	MutatePrefix   = "/mutate/"
)

// Lookup returns the admission functions of the script named name, false when no loaded
// version of it serves admission. It is called on every request, from any goroutine.
type Lookup func(name string) (Script, bool)

// Config configures a Server.
type Config struct {
	Lookup Lookup
	Logger *slog.Logger // nil discards
	// MaxBodyBytes bounds a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Observe, when set, sees every decision made (metrics, the trace); on the request's goroutine.
	Observe func(Observation)
	// Answered, when set, is told each answered review's kind and the runner's own time for it
	// (Answer); on the request's goroutine, after the answer is handed to the connection.
	Answered func(Answer)
	// HTTP2 lets Serve speak HTTP/2 as well as HTTP/1.1 (HTTPServer says why it does not by
	// default).
	HTTP2 bool
}

// Observation is one decision with what it was about.
type Observation struct {
	Script, Kind string // Kind is "validate" or "mutate"
	Request      *admissionv1.AdmissionRequest
	Decision     Decision
	// Received is when the request arrived; Object is the object's key as the views name it
	// (ObjectKey).
	Received time.Time
	Object   string
}

// Answer is the runner's own time for one review: from its body read whole to its answer
// handed to the connection. The handler starts on the headers, and kube-apiserver writes the
// body after them, in a write of its own: its webhook client's transport (otelhttp's) wraps
// the body in a reader net/http does not know to be in memory, so net/http flushes the
// headers first. The wait for the body is the API server's; it grows as the API server gets
// less CPU, not as the runner does (docs/benchmarks.md, "The runner as a process of its own").
type Answer struct {
	Kind string // "validate" or "mutate"
	Took time.Duration
}

// Server answers admission requests. It is an http.Handler, safe for concurrent use; Serve
// runs it over TLS.
type Server struct {
	lookup   Lookup
	logger   *slog.Logger
	limit    int64
	observe  func(Observation)
	answered func(Answer)
	http2    bool
}

// NewServer returns a Server over cfg.Lookup.
func NewServer(cfg Config) *Server {
	s := &Server{lookup: cfg.Lookup, logger: cfg.Logger, limit: cfg.MaxBodyBytes, observe: cfg.Observe, answered: cfg.Answered, http2: cfg.HTTP2}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.limit <= 0 {
		s.limit = DefaultMaxBodyBytes
	}
	return s
}

// ServeHTTP answers one AdmissionReview. A bad request (unknown path, not an AdmissionReview,
// wrong version, body over the limit) gets a 4xx with a plain-text reason and reaches no script.
// A path naming several scripts is answered by those of them loaded now (fanout.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	kind, names, ok := route(r.URL.Path)
	if !ok {
		http.Error(w, fmt.Sprintf("unknown path %q: admission paths are %s<script>, %s<script>, %s… and %s…",
			r.URL.Path, ValidatePrefix, MutatePrefix, ValidateGroupPrefix, MutateGroupPrefix), http.StatusNotFound)
		return
	}
	scripts := s.loaded(kind, names)
	if len(scripts) == 0 {
		http.Error(w, fmt.Sprintf("no loaded script %q serves %s here", strings.Join(names, `", "`), kind), http.StatusNotFound)
		return
	}
	req, err := readReview(r, s.limit)
	read := time.Now()
	var sreq scripting.AdmissionRequest
	if err == nil {
		sreq, err = scriptRequest(req)
	}
	if err != nil {
		var bad *badRequest
		if errors.As(err, &bad) {
			http.Error(w, bad.msg, bad.code)
			return
		}
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d, each := s.decide(r, kind, scripts, sreq)
	if len(names) > 1 && len(scripts) == 1 && !d.Allowed {
		// A shared entry's denial names its script, however many of the path are loaded now.
		d.Message = namedMessage(scripts[0].Name(), d.Message)
	}
	for i, one := range each {
		s.record(Observation{Script: scripts[i].Name(), Kind: kind, Request: req, Decision: one, Received: received, Object: ObjectKey(sreq)})
	}
	if err := writeJSON(w, response(req, d)); err != nil {
		s.logger.Warn("admission response not sent", "path", r.URL.Path, "error", err.Error())
		return
	}
	// Handed to the connection now rather than when the handler returns: the time measured
	// is the answer's, and the API server has it as soon.
	_ = http.NewResponseController(w).Flush()
	if s.answered != nil {
		s.answered(Answer{Kind: kind, Took: time.Since(read)})
	}
}

// route splits a path into the kind and the names of the scripts it calls, decoded
// (DecodeName).
func route(path string) (kind string, names []string, ok bool) {
	for _, k := range []struct{ prefix, kind string }{{ValidatePrefix, "validate"}, {MutatePrefix, "mutate"}} {
		if name, found := strings.CutPrefix(path, k.prefix); found && name != "" {
			name, ok := DecodeName(name)
			return k.kind, []string{name}, ok
		}
	}
	for _, k := range []struct{ prefix, kind string }{{ValidateGroupPrefix, "validate"}, {MutateGroupPrefix, "mutate"}} {
		if rest, found := strings.CutPrefix(path, k.prefix); found {
			names, ok := parseGroup(rest)
			names, decoded := decodeNames(names)
			return k.kind, names, ok && decoded
		}
	}
	return "", nil, false
}

// loaded are the scripts named that are loaded and define kind, in the order named.
func (s *Server) loaded(kind string, names []string) []Script {
	var out []Script
	for _, name := range names {
		if script, ok := s.lookup(name); ok && script.Defines(kind) {
			out = append(out, script)
		}
	}
	return out
}

// decide runs the scripts for req within the webhook's time, which the whole fan-out shares:
// the API server's ?timeout when it sends one, else the scripts' timeoutSeconds (the same
// for scripts sharing an entry; the shortest otherwise).
func (s *Server) decide(r *http.Request, kind string, scripts []Script, sreq scripting.AdmissionRequest) (Decision, []Decision) {
	seconds := scripts[0].Spec().TimeoutSeconds
	for _, script := range scripts[1:] {
		seconds = min(seconds, script.Spec().TimeoutSeconds)
	}
	budget := time.Duration(max(seconds, 1)) * time.Second
	if t, err := time.ParseDuration(r.URL.Query().Get("timeout")); err == nil && t > 0 {
		budget = min(budget, t)
	}
	ctx, cancel := context.WithTimeout(r.Context(), budget*9/10)
	defer cancel()
	if kind == "validate" {
		return ValidateAll(ctx, scripts, sreq)
	}
	return MutateAll(ctx, scripts, sreq)
}

// record logs what a script decided, beyond a plain allow, and tells Observe.
func (s *Server) record(o Observation) {
	if s.observe != nil {
		s.observe(o)
	}
	req, d := o.Request, o.Decision
	attrs := []any{"script", o.Script, "webhook", o.Kind, "operation", string(req.Operation), "resource", req.Resource.Resource,
		"namespace", req.Namespace, "name", req.Name, "user", req.UserInfo.Username, "took", d.Took.String()}
	switch d.Outcome {
	case OutcomeDenied:
		s.logger.Info("admission denied", append(attrs, "message", d.Message)...)
	case OutcomeAudited:
		s.logger.Info("admission audited: would have denied or changed", append(attrs, "message", d.Message)...)
	case OutcomeErrored:
		s.logger.Warn("admission script failed; its failurePolicy answered", append(attrs, "allowed", d.Allowed, "error", d.Message)...)
	}
}

// ReadHeaderTimeout bounds how long a client may take to send its headers.
const ReadHeaderTimeout = 10 * time.Second

// HTTPServer is the http.Server Serve runs h on (a Server, or a handler around one): over
// TLS, HTTP/1.1 only unless http2. Over HTTP/1.1 a handler reads its review from the
// connection on its own goroutine; over HTTP/2 the connection's one goroutine reads every
// stream's frames and hands each body over, and a handler that starts on the headers waits for
// that goroutine to be scheduled (kube-apiserver sends all its reviews on one connection):
// 60-90 µs of the runner's p50 per review (docs/benchmarks.md). HTTP/1.1 only is also what
// controller-runtime's webhook servers default to since HTTP/2's rapid-reset attacks
// (CVE-2023-44487). A stop over HTTP/1.1 needs a drain (drain.go); Serve does it.
func HTTPServer(h http.Handler, tlsConfig *tls.Config, http2 bool, logger *slog.Logger) *http.Server {
	srv := &http.Server{Handler: h, TLSConfig: tlsConfig, ReadHeaderTimeout: ReadHeaderTimeout,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug), Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(http2)
	return srv
}

// Serve serves s over TLS on ln until ctx ends, then stops: over HTTP/1.1 only it drains
// first (drain.go, at most MaxDrain or grace), then shuts down, letting the requests in flight
// finish within grace. The TLS config must give a certificate (Certificates or
// GetCertificate). It returns nil after a stop caused by ctx. The caller owns ln until Serve
// is called; Serve closes it.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsConfig *tls.Config, grace time.Duration) error {
	d := newDrain()
	srv := HTTPServer(d.wrap(s), tlsConfig, s.http2, s.logger)
	srv.ConnState = d.connState
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }() // owned here: joined below
	select {
	case err := <-done:
		return fmt.Errorf("serve admission: %w", err)
	case <-ctx.Done():
	}
	var serveErr error
	if !s.http2 {
		d.run(ln, min(grace, MaxDrain))
		if serveErr = <-done; errors.Is(serveErr, net.ErrClosed) {
			serveErr = nil // the drain closed the listener
		}
		done <- http.ErrServerClosed
	}
	if err := errors.Join(serveErr, s.shutdown(srv, done, grace)); err != nil {
		return fmt.Errorf("shut down admission server: %w", err)
	}
	return nil
}

// shutdown closes srv's listener and idle connections and waits for the requests in flight
// within grace, then closes what is left; done is what its Serve returned.
func (s *Server) shutdown(srv *http.Server, done <-chan error, grace time.Duration) error {
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Clients keep HTTP/2 connections open past the GOAWAY (kube-apiserver does): close
		// them; a request still running past grace is cut, as documented.
		s.logger.Debug("admission server: connections still open after the grace; closed", "grace", grace.String())
		err = srv.Close()
	}
	if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
