package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/engine"
)

// Admission webhooks (docs/admission.md): the HTTPS server for the scripts' validate and
// mutate, and the registration of their webhook configurations.

type webhookFlags struct {
	addr, url, service, name, certDir string
}

func (w *webhookFlags) add(f *pflag.FlagSet) {
	f.StringVar(&w.addr, "webhook-addr", ":9443", "serve the scripts' validate and mutate as admission webhooks (HTTPS) on this address, when --webhook-cert-dir is given")
	f.StringVar(&w.url, "webhook-url", "", "register the webhooks with this base URL, e.g. https://127.0.0.1:9443 (a local control plane); exclusive with --webhook-service")
	f.StringVar(&w.service, "webhook-service", "", "register the webhooks as calls to this Service, NAMESPACE/NAME (port 443 to --webhook-addr); exclusive with --webhook-url")
	f.StringVar(&w.name, "webhook-name", "", "name of the Validating- and MutatingWebhookConfiguration the runner owns (default: jsinformer-<the pod's namespace>)")
	f.StringVar(&w.certDir, "webhook-cert-dir", "", "folder with the webhook server's tls.crt and tls.key (and ca.crt, put in each entry's caBundle; default tls.crt), e.g. from cert-manager")
}

func (w *webhookFlags) validate() error {
	if w.url != "" && w.service != "" {
		return errors.New("--webhook-url and --webhook-service cannot be used together")
	}
	if w.url != "" && !strings.HasPrefix(w.url, "https://") {
		return fmt.Errorf("--webhook-url %q: the API server calls webhooks over HTTPS only", w.url)
	}
	if w.service != "" {
		if ns, name, ok := strings.Cut(w.service, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("--webhook-service %q: want NAMESPACE/NAME", w.service)
		}
	}
	if (w.url != "" || w.service != "") && w.certDir == "" {
		return errors.New("--webhook-url and --webhook-service need --webhook-cert-dir: the certificate the API server is told to trust")
	}
	return nil
}

// webhooks is the running admission side: the server and the registrar, each on a goroutine
// of its own that stop joins.
type webhooks struct {
	registrar *admission.Registrar // nil when nothing is registered
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// changed tells the registrar that the scripts serving admission changed (engine.Config.OnAdmission).
func (h *webhooks) changed() {
	if h != nil && h.registrar != nil {
		h.registrar.Changed()
	}
}

// newWebhooks prepares the server and, unless dryRun, the registrar; nil when
// --webhook-cert-dir is not given (no server). The listener is bound here, so a port in use
// fails the start.
func (w *webhookFlags) newWebhooks(restConfig *rest.Config, dryRun bool, logger *slog.Logger) (*webhooks, *serveParts, error) {
	if w.certDir == "" {
		return nil, nil, nil
	}
	cert, ca, err := loadCertDir(w.certDir)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", w.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("serve admission webhooks on %s: %w", w.addr, err)
	}
	h := &webhooks{}
	if (w.url != "" || w.service != "") && !dryRun {
		client, err := kubernetes.NewForConfig(restConfig)
		if err != nil {
			_ = ln.Close()
			return nil, nil, fmt.Errorf("build the client for webhook registration: %w", err)
		}
		h.registrar = &admission.Registrar{Client: client, Name: w.configName(), Target: w.target(),
			CABundle: func() []byte { return ca }, Exclude: []string{podNamespace()}, Logger: logger.With("component", "webhooks")}
		h.registrar.Init()
	}
	return h, &serveParts{ln: ln, tls: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}, nil
}

// serveParts is what start needs to serve: the bound listener and the TLS config.
type serveParts struct {
	ln  net.Listener
	tls *tls.Config
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

// start serves admission from e and runs the registrar, until stop.
func (h *webhooks) start(e *engine.Engine, parts *serveParts, logger *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	srv := admission.NewServer(admission.Config{Logger: logger.With("component", "admission"),
		Lookup: func(name string) (admission.Script, bool) {
			a, ok := e.AdmissionScript(name)
			return a, ok
		}})
	h.wg.Go(func() {
		if err := srv.Serve(ctx, parts.ln, parts.tls, 5*time.Second); err != nil {
			logger.Error("admission webhook server failed", "error", err.Error())
		}
	})
	if h.registrar != nil {
		h.registrar.Entries = func() []admission.Entry { return admissionEntries(e.AdmissionEntries()) }
		h.wg.Go(func() { _ = h.registrar.Run(ctx) })
	}
}

// stop ends the server (requests in flight finish within its grace) and the registrar, and
// waits for both. The configurations stay: each script's failurePolicy decides meanwhile.
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
		selectors := map[string]bool{}
		allNamespaces := false
		for _, w := range e.Watches {
			gvr := w.Resource.GVR
			entry.Rules = append(entry.Rules, admission.Rule{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource, Namespaced: w.Resource.Namespaced})
			if !w.Resource.Namespaced || w.Namespace == "" {
				allNamespaces = true
			} else if !slices.Contains(entry.Namespaces, w.Namespace) {
				entry.Namespaces = append(entry.Namespaces, w.Namespace)
			}
			selectors[w.LabelSelector] = true
		}
		if allNamespaces {
			entry.Namespaces = nil
		}
		if len(selectors) == 1 {
			for sel := range selectors {
				entry.LabelSelector = sel
			}
		}
		out = append(out, entry)
	}
	return out
}

// loadCertDir reads tls.crt and tls.key, and ca.crt for the caBundle (tls.crt when absent).
func loadCertDir(dir string) (tls.Certificate, []byte, error) {
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("--webhook-cert-dir %s: load tls.crt and tls.key: %w", dir, err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if errors.Is(err, os.ErrNotExist) {
		ca, err = os.ReadFile(certFile)
	}
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("--webhook-cert-dir %s: read the CA: %w", dir, err)
	}
	return cert, ca, nil
}
