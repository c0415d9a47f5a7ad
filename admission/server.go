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
	// MaxBodyBytes bounds a request body; zero means Limits.MaxBodyBytes.
	MaxBodyBytes int64
	// Limits bound the connections, their timeouts and the request bodies held (limits.go);
	// zero fields take the defaults.
	Limits Limits
	// ShutdownDelay is how long Serve keeps accepting and answering once its context has
	// ended, before it drains and shuts down: the time a Service takes to stop routing new
	// connections to a terminating pod. Over HTTP/1.1 every answer in it says
	// "Connection: close", so the API server's kept-alive connections move to other replicas.
	ShutdownDelay time.Duration
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
	limits   Limits
	budget   *bodyBudget
	delay    time.Duration
	observe  func(Observation)
	answered func(Answer)
	http2    bool
}

// NewServer returns a Server over cfg.Lookup.
func NewServer(cfg Config) *Server {
	s := &Server{lookup: cfg.Lookup, logger: cfg.Logger, limits: cfg.Limits, delay: cfg.ShutdownDelay,
		observe: cfg.Observe, answered: cfg.Answered, http2: cfg.HTTP2}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBodyBytes > 0 {
		s.limits.MaxBodyBytes = cfg.MaxBodyBytes
	}
	s.limits = s.limits.WithDefaults()
	s.budget = &bodyBudget{max: s.limits.BodyBytesInFlight}
	return s
}

// MaxPathBytes bounds a request's path: a longer one is refused (414) before it is parsed.
const MaxPathBytes = 16 << 10

// ServeHTTP answers one AdmissionReview. A bad request (unknown or overlong path, not an
// AdmissionReview, wrong version, body over the limit, values outside the AdmissionReview
// schema or a resource no script of the path is registered for: reviewcheck.go) gets a 4xx
// with a plain-text reason, reaches no script and is neither observed nor recorded. A path
// naming several scripts is answered by those of them loaded now (fanout.go), and for
// each one not loaded by its entry's failure policy (resolve.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	kind, named, scripts, err := s.scriptsFor(r.URL.Path)
	if err != nil {
		refused(w, err)
		return
	}
	req, release, err := readReview(r, s.limits.MaxBodyBytes, s.budget)
	defer release()
	read := time.Now()
	var sreq scripting.AdmissionRequest
	if err == nil {
		scripts, sreq, err = accept(req, scripts)
	}
	if err != nil {
		refused(w, err)
		return
	}
	d, each := s.decide(r, received, kind, scripts, sreq)
	if named > 1 && len(scripts) == 1 && !d.Allowed {
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

// scriptsFor are the kind, the number of scripts named and the loaded scripts of path: 414
// when it is longer than MaxPathBytes, 404 when it is no admission path or none of its
// scripts is loaded.
func (s *Server) scriptsFor(path string) (kind string, named int, scripts []Script, err error) {
	if len(path) > MaxPathBytes {
		return "", 0, nil, refuse(http.StatusRequestURITooLong, "path of %d bytes: admission paths are at most %d", len(path), MaxPathBytes)
	}
	kind, names, ok := route(path)
	if !ok {
		return "", 0, nil, refuse(http.StatusNotFound, "unknown path %.256q: admission paths are %s<script>, %s<script>, %s… and %s… (at most %d scripts)",
			path, ValidatePrefix, MutatePrefix, ValidateGroupPrefix, MutateGroupPrefix, MaxGroupScripts)
	}
	scripts, found := resolve(s.lookup, kind, names, groupPolicy(path))
	if found == 0 {
		return "", 0, nil, refuse(http.StatusNotFound, "no loaded script %.256q serves %s here", strings.Join(names, `", "`), kind)
	}
	return kind, len(names), scripts, nil
}

// accept checks req's values (reviewcheck.go) and decodes what the scripts covering it see.
func accept(req *admissionv1.AdmissionRequest, scripts []Script) ([]Script, scripting.AdmissionRequest, error) {
	if err := checkReview(req); err != nil {
		return nil, scripting.AdmissionRequest{}, err
	}
	scripts, err := covering(scripts, req)
	if err != nil {
		return nil, scripting.AdmissionRequest{}, err
	}
	sreq, err := scriptRequest(req)
	return scripts, sreq, err
}

// refused answers a request refused before any script: its code and reason, 400 by default.
func refused(w http.ResponseWriter, err error) {
	var bad *badRequest
	if errors.As(err, &bad) {
		http.Error(w, bad.msg, bad.code)
		return
	}
	http.Error(w, err.Error(), http.StatusBadRequest)
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

// record logs what a script decided, beyond a plain allow, and tells Observe.
func (s *Server) record(o Observation) {
	if s.observe != nil && !errors.Is(o.Decision.Err, ErrNotLoaded) { // a name from the path: no metric series, no record
		s.observe(o)
	}
	req, d := o.Request, o.Decision
	attrs := []any{"script", o.Script, "webhook", o.Kind, "operation", string(req.Operation), "resource", req.Resource.Resource,
		"namespace", req.Namespace, "name", req.Name, "user", cut(req.UserInfo.Username), "took", d.Took.String()}
	switch d.Outcome {
	case OutcomeDenied:
		s.logger.Info("admission denied", append(attrs, "message", d.Message)...)
	case OutcomeAudited:
		s.logger.Info("admission audited: would have denied or changed", append(attrs, "message", d.Message)...)
	case OutcomeErrored:
		s.logger.Warn("admission script failed; its failurePolicy answered", append(attrs, "allowed", d.Allowed, "error", d.Message)...)
	}
}

// Serve serves s over TLS on ln until ctx ends, then stops: it keeps accepting and answering
// for Config.ShutdownDelay (over HTTP/1.1 with "Connection: close" on every answer), then over
// HTTP/1.1 only it drains (drain.go, at most MaxDrain or grace), then shuts down, letting the
// requests in flight finish within grace. Connections beyond Limits.MaxConnections are closed
// as soon as they are accepted. The TLS config must give a certificate (Certificates or
// GetCertificate). It returns nil after a stop caused by ctx. The caller owns ln until Serve
// is called; Serve closes it.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsConfig *tls.Config, grace time.Duration) error {
	d := newDrain(s.limits.MaxConnections, s.logger)
	srv := newHTTPServer(d.wrap(s), tlsConfig, s.http2, s.logger, s.limits)
	srv.ConnState = d.connState
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }() // owned here: joined below
	select {
	case err := <-done:
		return fmt.Errorf("serve admission: %w", err)
	case <-ctx.Done():
	}
	s.keepServing(d)
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

// keepServing waits the shutdown delay, the listener open: a Service routes new connections
// to a terminating pod until its endpoints have dropped it, and a connection refused there
// fails the API server's review. Over HTTP/1.1 each answer meanwhile closes its connection,
// so the API server's next review dials again, through the Service, to another replica.
func (s *Server) keepServing(d *drain) {
	if s.delay <= 0 {
		return
	}
	if !s.http2 {
		d.closeAnswers.Store(true)
	}
	s.logger.Info("admission server stopping: still serving for the shutdown delay", "delay", s.delay.String())
	t := time.NewTimer(s.delay)
	defer t.Stop()
	<-t.C
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
