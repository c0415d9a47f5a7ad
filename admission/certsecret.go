package admission

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SecretCerts keeps the webhook's CA and serving certificate in a Secret that every replica
// shares (kubernetes.io/tls, with ca.crt and ca.key beside tls.crt and tls.key): the first
// replica creates it, the others adopt it, and whoever sees the serving certificate within
// RenewBefore of its end signs a new one with the same CA and writes it (a conflict means
// another replica did: it is read instead). Since the CA, and so every entry's caBundle,
// stays the same, the old and the new serving certificates are both trusted while replicas
// move from one to the other: no request fails during a renewal.
//
// Every replica reads the Secret every Check. When it was deleted, a replica makes a new one
// with a new CA; when it holds another CA (recreated by a replica or by hand), each replica
// keeps serving its certificate, puts the new CA beside the old one in CABundle (OnCAChange),
// and serves the new certificate only once the registrar reports that bundle registered
// (Registered) and Settle has passed, when HoldNewCA is set (servingGate). The registrar
// keeps the old CA in the entries for a grace period (cabundle.go), so neither CA is refused
// while replicas move over.
//
// Goroutines: Run is the one loop (the caller's goroutine); GetCertificate, CABundle and
// Registered are safe from any goroutine.
type SecretCerts struct {
	Client          kubernetes.Interface
	Namespace, Name string
	Hosts           []string      // the serving certificate's DNS names and IP addresses
	Validity        time.Duration // of a serving certificate; zero means DefaultServingValidity
	RenewBefore     time.Duration // renew this long before the end; zero means a third of Validity
	CAValidity      time.Duration // zero means DefaultCAValidity
	// Check is how often the Secret is read, to see another replica's renewal or a new CA;
	// zero means DefaultSecretCheck.
	Check  time.Duration
	Logger *slog.Logger
	// OnCAChange is called when the CA bundle changes (the registrar updates the entries).
	OnCAChange func()
	// HoldNewCA: a certificate with a new CA serves only after Registered reported a bundle
	// carrying it, and Settle after that (zero means DefaultSettle). Set it when a
	// registrar writes the entries and tells Registered; without it the new one serves at once.
	HoldNewCA bool
	Settle    time.Duration

	servingGate
}

// Defaults of SecretCerts.
const (
	DefaultServingValidity = 90 * 24 * time.Hour
	DefaultCAValidity      = 10 * 365 * 24 * time.Hour
	DefaultSecretCheck     = 10 * time.Second
)

type servedCert struct {
	cert     *tls.Certificate
	ca       []byte
	notAfter time.Time
}

func (c *SecretCerts) validity() time.Duration {
	if c.Validity > 0 {
		return c.Validity
	}
	return DefaultServingValidity
}

func (c *SecretCerts) renewBefore() time.Duration {
	if c.RenewBefore > 0 {
		return c.RenewBefore
	}
	return c.validity() / 3
}

// GetCertificate is tls.Config.GetCertificate: the serving certificate read last (or the
// one before, while a new CA waits for its registration).
func (c *SecretCerts) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.present()
}

// Ensure reads the Secret, creating it or renewing its serving certificate when due, and
// serves what it holds then.
func (c *SecretCerts) Ensure(ctx context.Context) error {
	api := c.Client.CoreV1().Secrets(c.Namespace)
	for range 3 { // a conflict with another replica: read what it wrote and check again
		sec, err := api.Get(ctx, c.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			sec, err = c.create(ctx)
		case err == nil && c.due(sec):
			sec, err = c.renew(ctx, sec)
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("ensure webhook certificate Secret %s/%s: %w", c.Namespace, c.Name, err)
		}
		return c.use(sec)
	}
	return fmt.Errorf("ensure webhook certificate Secret %s/%s: kept conflicting", c.Namespace, c.Name)
}

// due reports a Secret whose serving certificate must be (re)made: unreadable, ending within
// RenewBefore, or not for Hosts.
func (c *SecretCerts) due(sec *corev1.Secret) bool {
	leaf, err := leafOf(sec.Data[corev1.TLSCertKey])
	if err != nil || len(sec.Data["ca.key"]) == 0 {
		return true
	}
	if time.Until(leaf.NotAfter) < c.renewBefore() {
		return true
	}
	names := slices.Clone(leaf.DNSNames)
	for _, ip := range leaf.IPAddresses {
		names = append(names, ip.String())
	}
	for _, h := range c.Hosts {
		if !slices.Contains(names, h) {
			return true
		}
	}
	return false
}

func (c *SecretCerts) create(ctx context.Context) (*corev1.Secret, error) {
	now := time.Now()
	validity := DefaultCAValidity
	if c.CAValidity > 0 {
		validity = c.CAValidity
	}
	ca, err := newCA(c.Name, now, validity)
	if err != nil {
		return nil, err
	}
	serving, err := newServing(ca, c.Hosts, now, c.validity())
	if err != nil {
		return nil, err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace,
		Labels: map[string]string{"app.kubernetes.io/managed-by": managedBy}}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: serving.cert, corev1.TLSPrivateKeyKey: serving.key, "ca.crt": ca.cert, "ca.key": ca.key}}
	sec, err = c.Client.CoreV1().Secrets(c.Namespace).Create(ctx, sec, metav1.CreateOptions{})
	if err == nil {
		c.logger().Info("webhook certificate Secret created", "secret", c.Namespace+"/"+c.Name)
	}
	return sec, err
}

func (c *SecretCerts) renew(ctx context.Context, sec *corev1.Secret) (*corev1.Secret, error) {
	ca := keyPair{cert: sec.Data["ca.crt"], key: sec.Data["ca.key"]}
	serving, err := newServing(ca, c.Hosts, time.Now(), c.validity())
	if err != nil {
		return nil, err
	}
	sec = sec.DeepCopy()
	sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey] = serving.cert, serving.key
	c.logger().Info("webhook serving certificate renewed", "secret", c.Namespace+"/"+c.Name)
	return c.Client.CoreV1().Secrets(c.Namespace).Update(ctx, sec, metav1.UpdateOptions{})
}

// use serves sec's certificate from now on.
func (c *SecretCerts) use(sec *corev1.Secret) error {
	cert, err := tls.X509KeyPair(sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return fmt.Errorf("load the Secret's certificate: %w", err)
	}
	leaf, err := leafOf(sec.Data[corev1.TLSCertKey])
	if err != nil {
		return err
	}
	if c.offer(&servedCert{cert: &cert, ca: sec.Data["ca.crt"], notAfter: leaf.NotAfter}, holdNewCA{c.HoldNewCA, c.Settle}) {
		c.logger().Info("webhook CA changed in the Secret", "secret", c.Namespace+"/"+c.Name, "held", c.HoldNewCA)
		if c.OnCAChange != nil {
			c.OnCAChange()
		}
	}
	return nil
}

// Run ensures the certificate at once, then every Check (or a tenth of the renewal window
// when shorter) and 5 s after a failure, and serves a held certificate when its time comes,
// until ctx ends.
func (c *SecretCerts) Run(ctx context.Context) error {
	every := c.Check
	if every <= 0 {
		every = DefaultSecretCheck
	}
	every = max(min(every, c.renewBefore()/10), 100*time.Millisecond)
	c.loop(ctx, func() time.Duration {
		if err := c.Ensure(ctx); err != nil {
			if ctx.Err() == nil {
				c.logger().Warn("webhook certificate not ensured; retrying", "error", err.Error())
			}
			return 5 * time.Second
		}
		return every
	}, func() { c.logger().Info("webhook certificate of the new CA serving", "secret", c.Namespace+"/"+c.Name) })
	return nil
}

func (c *SecretCerts) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}
