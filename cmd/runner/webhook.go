package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/engine"
)

// Admission webhooks (docs/admission.md): the HTTPS server for the scripts' validate and
// mutate, and the registration of their webhook configurations.

type webhookFlags struct {
	addr, url, service, name, certDir, clientCA string
	http2                                       bool
	maxConns                                    int
	shutdownDelay                               time.Duration
}

func (w *webhookFlags) add(f *pflag.FlagSet) {
	f.StringVar(&w.addr, "webhook-addr", ":9443", "serve the scripts' validate and mutate as admission webhooks (HTTPS) on this address, when --webhook-url, --webhook-service or --webhook-cert-dir is given")
	f.StringVar(&w.url, "webhook-url", "", "register the webhooks with this base URL, e.g. https://127.0.0.1:9443 (a local control plane); exclusive with --webhook-service")
	f.StringVar(&w.service, "webhook-service", "", "register the webhooks as calls to this Service, NAMESPACE/NAME (port 443 to --webhook-addr); exclusive with --webhook-url")
	f.StringVar(&w.name, "webhook-name", "", "name of the Validating- and MutatingWebhookConfiguration the runner owns (default: jsinformer-<the pod's namespace>)")
	f.StringVar(&w.certDir, "webhook-cert-dir", "", "folder with the webhook server's tls.crt, tls.key and ca.crt (the CA put in each entry's caBundle; required when the runner registers the webhooks), e.g. from cert-manager, reloaded when they change (default: a CA and serving certificate the runner makes and keeps in the Secret <webhook-name>-tls of its namespace, renewed before expiry)")
	f.StringVar(&w.clientCA, "webhook-client-ca", "", "require every caller of the webhooks to present a client certificate signed by a CA of this PEM file (the API server's, configured in its AdmissionConfiguration); read at start")
	f.IntVar(&w.maxConns, "webhook-max-connections", admission.DefaultMaxConnections, "open connections the webhook server keeps at most; one more is closed as soon as it is accepted (0: the default)")
	f.DurationVar(&w.shutdownDelay, "webhook-shutdown-delay", 5*time.Second, "on SIGTERM, keep accepting and answering webhook requests this long (each answer closing its connection) before draining, so that requests a Service still routes to the terminating pod are answered")
	f.BoolVar(&w.http2, "webhook-http2", false, "serve the webhooks over HTTP/2 as well as HTTP/1.1 (off: each review is read on its handler's goroutine instead of being handed over by the connection's, 60-90 µs less at p50, docs/benchmarks.md, and HTTP/2's rapid-reset attacks do not apply)")
}

func (w *webhookFlags) validate() error {
	if w.url != "" && w.service != "" {
		return errors.New("--webhook-url and --webhook-service cannot be used together")
	}
	if w.url != "" && !strings.HasPrefix(w.url, "https://") {
		return fmt.Errorf("--webhook-url %q: the API server calls webhooks over HTTPS only", w.url)
	}
	if w.maxConns < 0 {
		return fmt.Errorf("--webhook-max-connections %d: want 1 or more (0: the default)", w.maxConns)
	}
	if w.shutdownDelay < 0 {
		return fmt.Errorf("--webhook-shutdown-delay %s: want 0 or more", w.shutdownDelay)
	}
	if w.service != "" {
		if ns, name, ok := strings.Cut(w.service, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("--webhook-service %q: want NAMESPACE/NAME", w.service)
		}
	}
	return nil
}

// webhooks is the running admission side: the server, the certificate's renewal or reload
// and the registrar, each on a goroutine of its own that stop joins.
type webhooks struct {
	registrar *admission.Registrar // nil when nothing is registered
	certs     certSource
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	// loaded is closed once the engine has loaded its initial scripts (engine.Config.OnReady):
	// the registrar starts then, so that a replica starting beside others never registers
	// the empty set of entries it has before, deleting theirs.
	loaded     chan struct{}
	loadedOnce sync.Once
}

// ready tells that the engine loaded its initial scripts (engine.Config.OnReady); nil-safe.
func (h *webhooks) ready() {
	if h != nil {
		h.loadedOnce.Do(func() { close(h.loaded) })
	}
}

// certSource is the serving certificate: files (admission.FileCerts) or the shared Secret
// (admission.SecretCerts).
type certSource interface {
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
	CABundle() []byte
	Registered(bundle []byte)
	Run(ctx context.Context) error
}

// changed tells the registrar that the scripts serving admission changed (engine.Config.OnAdmission).
func (h *webhooks) changed() {
	if h != nil && h.registrar != nil {
		h.registrar.Changed()
	}
}

// newWebhooks prepares the certificate, the server and, unless dryRun, the registrar; nil
// when no --webhook-* flag asks for admission. The certificate is loaded (or the Secret
// ensured) and the listener bound here, so either failing fails the start.
func (w *webhookFlags) newWebhooks(ctx context.Context, restConfig *rest.Config, dryRun bool, logger *slog.Logger) (*webhooks, *serveParts, error) {
	if w.certDir == "" && w.url == "" && w.service == "" {
		return nil, nil, nil
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("build the client for the admission webhooks: %w", err)
	}
	logger = logger.With("component", "webhooks")
	h := &webhooks{loaded: make(chan struct{})}
	registers := (w.url != "" || w.service != "") && !dryRun
	if h.certs, err = w.newCerts(ctx, client, registers, logger, h.changed); err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", w.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("serve admission webhooks on %s: %w", w.addr, err)
	}
	if registers {
		h.registrar = &admission.Registrar{Client: client, Name: w.configName(), Target: w.target(),
			CABundle: h.certs.CABundle, Registered: h.certs.Registered, Exclude: []string{podNamespace()}, Logger: logger}
		h.registrar.Init()
	}
	tlsConfig, err := w.tlsConfig(h.certs)
	if err != nil {
		_ = ln.Close()
		return nil, nil, err
	}
	return h, &serveParts{ln: ln, tls: tlsConfig, http2: w.http2, maxConns: w.maxConns, shutdownDelay: w.shutdownDelay}, nil
}

// tlsConfig serves certs' certificate and, with --webhook-client-ca, requires a client
// certificate that CA signed.
func (w *webhookFlags) tlsConfig(certs certSource) (*tls.Config, error) {
	cfg := &tls.Config{GetCertificate: certs.GetCertificate, MinVersion: tls.VersionTLS12}
	if w.clientCA == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(w.clientCA)
	if err != nil {
		return nil, fmt.Errorf("read --webhook-client-ca: %w", err)
	}
	cfg.ClientCAs = x509.NewCertPool()
	if !cfg.ClientCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("read --webhook-client-ca %s: no PEM certificate in it", w.clientCA)
	}
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	return cfg, nil
}

// newCerts loads --webhook-cert-dir, or ensures the shared Secret. When the runner registers
// the entries (registers), their caBundle is the CA, so the folder must hold ca.crt, and a
// certificate with a new CA serves only once the registrar has written it (HoldNewCA).
func (w *webhookFlags) newCerts(ctx context.Context, client kubernetes.Interface, registers bool, logger *slog.Logger, caChanged func()) (certSource, error) {
	if w.certDir != "" {
		f := &admission.FileCerts{Dir: w.certDir, RequireCA: registers, HoldNewCA: registers, Logger: logger, OnCAChange: caChanged}
		if err := f.Load(); err != nil {
			return nil, fmt.Errorf("--webhook-cert-dir: %w", err)
		}
		return f, nil
	}
	s := &admission.SecretCerts{Client: client, Namespace: podNamespace(), Name: w.configName() + "-tls", Hosts: w.hosts(),
		HoldNewCA: registers, Logger: logger, OnCAChange: caChanged}
	if err := s.Ensure(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// hosts are the names the API server reaches the webhook by: --webhook-url's host, or the
// Service's DNS names.
func (w *webhookFlags) hosts() []string {
	if w.url != "" {
		if u, err := url.Parse(w.url); err == nil && u.Hostname() != "" {
			return []string{u.Hostname()}
		}
	}
	ns, name, _ := strings.Cut(w.service, "/")
	return []string{name + "." + ns + ".svc", name + "." + ns + ".svc.cluster.local", name + "." + ns}
}

// serveParts is what start needs to serve: the bound listener, the TLS config, whether to
// speak HTTP/2 (--webhook-http2), the connection cap and the shutdown delay.
type serveParts struct {
	ln            net.Listener
	tls           *tls.Config
	http2         bool
	maxConns      int
	shutdownDelay time.Duration
}

func (w *webhookFlags) configName() string {
	if w.name != "" {
		return w.name
	}
	return "jsinformer-" + podNamespace()
}

func (w *webhookFlags) target() admission.Target {
	if w.url != "" {
		return admission.Target{URL: w.url}
	}
	ns, name, _ := strings.Cut(w.service, "/")
	return admission.Target{ServiceNamespace: ns, Service: name}
}

// start serves admission from e, with its series on reg, and runs the registrar, until stop.
func (h *webhooks) start(e *engine.Engine, parts *serveParts, logger *slog.Logger, reg prometheus.Registerer) {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	var metrics *admission.Metrics
	if reg != nil {
		metrics = admission.NewMetrics(reg)
	}
	// Every decision is counted and kept in the trace beside the object's events.
	observe := func(o admission.Observation) {
		if metrics != nil {
			metrics.Observe(o)
		}
		e.RecordAdmission(o.TraceRecord())
	}
	cfg := admission.Config{Logger: logger.With("component", "admission"), Observe: observe, HTTP2: parts.http2,
		Limits: admission.Limits{MaxConnections: parts.maxConns}, ShutdownDelay: parts.shutdownDelay,
		Lookup: func(name string) (admission.Script, bool) {
			a, ok := e.AdmissionScript(name)
			return a, ok
		}}
	if metrics != nil {
		cfg.Answered = metrics.ObserveAnswer
	}
	srv := admission.NewServer(cfg)
	h.wg.Go(func() {
		if err := srv.Serve(ctx, parts.ln, parts.tls, 5*time.Second); err != nil {
			logger.Error("admission webhook server failed", "error", err.Error())
		}
	})
	h.wg.Go(func() { _ = h.certs.Run(ctx) })
	if h.registrar != nil {
		h.registrar.Entries = func() []admission.Entry { return admissionEntries(e.AdmissionEntries()) }
		h.wg.Go(func() {
			select {
			case <-h.loaded:
				_ = h.registrar.Run(ctx)
			case <-ctx.Done():
			}
		})
	}
}

// engineContext is the context of the engine's Run when admission is served: it ends only
// once ctx has ended and the admission server has shut down (stop), so that a request in
// flight, or one arriving during the shutdown, never finds its script's version retired and
// is answered by the script, while the API server moves to another replica. release frees it
// (call it once Run has returned); nil-safe.
func (h *webhooks) engineContext(ctx context.Context) (context.Context, func()) {
	if h == nil {
		return ctx, func() {}
	}
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() { // on context's own goroutine; ends with stop
		h.stop()
		cancel()
	})
	return out, func() {
		unhook()
		cancel()
	}
}

// runEngine runs e until ctx ends, within engineContext.
func (h *webhooks) runEngine(ctx context.Context, e *engine.Engine) error {
	runCtx, release := h.engineContext(ctx)
	defer release()
	return e.Run(runCtx)
}

// stop ends the server (requests in flight finish within its grace) and the registrar, and
// waits for both; idempotent. The configurations stay: each script's failurePolicy decides
// meanwhile.
func (h *webhooks) stop() {
	if h == nil || h.cancel == nil {
		return
	}
	h.cancel()
	h.wg.Wait()
}

// admissionEntries are the registrar's entries for the engine's scripts serving admission.
func admissionEntries(in []engine.AdmissionEntry) []admission.Entry {
	out := make([]admission.Entry, 0, len(in))
	for _, e := range in {
		entry := admission.Entry{Script: e.Script, Validate: e.Validate, Mutate: e.Mutate, Spec: e.Spec}
		for _, w := range e.Watches {
			gvr := w.Resource.GVR
			entry.Rules = append(entry.Rules, admission.Rule{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource, Namespaced: w.Resource.Namespaced})
		}
		entry.Namespaces, entry.LabelSelector = e.Selectors()
		out = append(out, entry)
	}
	return out
}
