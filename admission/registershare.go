package admission

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/url"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
)

// Replicas registering different --webhook-url: an entry holds one URL, so only one replica
// can be called through it. Were each replica to write its own URL, the entries would flip
// from one to the other at every reconcile. Instead a replica keeps the URL another replica
// registered while a server answers there (a TLS handshake verified with the CA bundle it
// would write), and writes its own only when none does. The replicas converge on the first
// URL registered; when its replica stops, another takes the entries over within AnswerCheck.
// Replicas sharing one address (a Service, or one URL in front of all) write identical
// entries and need none of this.

// AnswerCheck is how often a replica that kept another's URL checks that a server still
// answers there.
const AnswerCheck = 5 * time.Second

// answerTimeout bounds one check.
const answerTimeout = 2 * time.Second

// sharing is one reconcile's view of the URLs other replicas registered: whether a server
// answers at each, asked once per host.
type sharing struct {
	ours     string // r.Target.URL; "" with a Service target (nothing to share)
	ca       []byte
	now      time.Time // the reconcile's one clock reading: both configurations record a CA added at the same second
	answered map[string]bool
	kept     bool // some entry kept another replica's URL
}

// keep sets each hook's URL to the one stored for the same entry when it is another
// replica's (same path, another host) and a server answers there.
func (s *sharing) keep(ctx context.Context, hooks, stored map[string]*admissionregv1.WebhookClientConfig) {
	if s.ours == "" {
		return
	}
	for name, cfg := range hooks {
		cur, ok := stored[name]
		if !ok || cur.URL == nil || cfg.URL == nil || *cur.URL == *cfg.URL {
			continue
		}
		theirs, err1 := url.Parse(*cur.URL)
		mine, err2 := url.Parse(*cfg.URL)
		if err1 != nil || err2 != nil || theirs.Path != mine.Path || theirs.Scheme != "https" {
			continue
		}
		if s.answers(ctx, theirs) {
			u := *cur.URL
			cfg.URL, s.kept = &u, true
		}
	}
}

// clientConfigs maps hooks' names to their client configs (pointers into hooks), get giving
// both of one hook.
func clientConfigs[H any](hooks []H, get func(*H) (string, *admissionregv1.WebhookClientConfig)) map[string]*admissionregv1.WebhookClientConfig {
	out := make(map[string]*admissionregv1.WebhookClientConfig, len(hooks))
	for i := range hooks {
		name, cfg := get(&hooks[i])
		out[name] = cfg
	}
	return out
}

func validatingConfig(h *admissionregv1.ValidatingWebhook) (string, *admissionregv1.WebhookClientConfig) {
	return h.Name, &h.ClientConfig
}

func mutatingConfig(h *admissionregv1.MutatingWebhook) (string, *admissionregv1.WebhookClientConfig) {
	return h.Name, &h.ClientConfig
}

// answers reports whether a server at u's host completes a TLS handshake verified with s.ca.
func (s *sharing) answers(ctx context.Context, u *url.URL) bool {
	if ok, asked := s.answered[u.Host]; asked {
		return ok
	}
	pool := x509.NewCertPool()
	ok := pool.AppendCertsFromPEM(s.ca)
	if ok {
		addr := u.Host
		if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), "443")
		}
		ctx, cancel := context.WithTimeout(ctx, answerTimeout)
		defer cancel()
		d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}}
		c, err := d.DialContext(ctx, "tcp", addr)
		if ok = err == nil; ok {
			_ = c.Close()
		}
	}
	s.answered[u.Host] = ok
	return ok
}
