package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// FileCerts serves the certificate of a folder (tls.crt, tls.key, and ca.crt for the
// caBundle), as cert-manager or a mounted Secret provides it, and reloads it when the files
// change, as controller-runtime's certwatcher does: by content, checked every Interval, so
// the atomic symlink swap of a Secret volume is seen like an in-place write. A half-written
// pair that does not load keeps the previous certificate serving. Without ca.crt Load fails
// when RequireCA is set (the runner registers the entries): the caBundle would otherwise pin
// tls.crt itself, which every renewal replaces, refusing the renewed certificate.
//
// When ca.crt changes, the new pair is held exactly as SecretCerts holds a new CA
// (HoldNewCA, Settle, Registered): the previous pair serves until the bundle carrying both
// CAs is registered.
//
// Goroutines: Run is the one loop (the caller's goroutine); GetCertificate, CABundle and
// Registered are safe from any goroutine.
type FileCerts struct {
	Dir       string
	Interval  time.Duration // zero means DefaultFileCheckInterval
	RequireCA bool
	Logger    *slog.Logger
	// OnCAChange is called when the CA bundle changes (the registrar updates the entries).
	OnCAChange func()
	// HoldNewCA and Settle: as SecretCerts'.
	HoldNewCA bool
	Settle    time.Duration

	servingGate
	seen []byte // the contents last loaded, to notice a change; Run's
}

// DefaultFileCheckInterval is how often FileCerts looks at its files.
const DefaultFileCheckInterval = 10 * time.Second

// GetCertificate is tls.Config.GetCertificate: the certificate loaded last (or the one
// before, while a new CA waits for its registration).
func (f *FileCerts) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cur := f.cur.Load(); cur != nil {
		return cur.cert, nil
	}
	return nil, fmt.Errorf("serve webhook: no certificate loaded from %s", f.Dir)
}

// Load reads the files and serves them if they changed since the last Load.
func (f *FileCerts) Load() error {
	certPEM, err := os.ReadFile(filepath.Join(f.Dir, "tls.crt"))
	if err != nil {
		return fmt.Errorf("load webhook certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(f.Dir, "tls.key"))
	if err != nil {
		return fmt.Errorf("load webhook certificate: %w", err)
	}
	ca, err := f.readCA(certPEM)
	if err != nil {
		return err
	}
	all := bytes.Join([][]byte{certPEM, keyPEM, ca}, []byte{0})
	if bytes.Equal(all, f.seen) {
		return nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("load webhook certificate from %s: %w", f.Dir, err)
	}
	f.seen = all
	first := f.cur.Load() == nil
	if f.offer(&servedCert{cert: &cert, ca: ca}, holdNewCA{f.HoldNewCA, f.Settle}) && !first {
		f.logger().Info("webhook CA changed in the files", "dir", f.Dir, "held", f.HoldNewCA)
		if f.OnCAChange != nil {
			f.OnCAChange()
		}
	} else if !first {
		f.logger().Info("webhook certificate reloaded", "dir", f.Dir)
	}
	return nil
}

// readCA is ca.crt, or without it tls.crt when RequireCA is not set.
func (f *FileCerts) readCA(certPEM []byte) ([]byte, error) {
	ca, err := os.ReadFile(filepath.Join(f.Dir, "ca.crt"))
	switch {
	case errors.Is(err, os.ErrNotExist) && f.RequireCA:
		return nil, fmt.Errorf("load webhook CA: %s has no ca.crt: the entries' caBundle must be the CA that signs tls.crt "+
			"(cert-manager writes it as ca.crt), not tls.crt itself, which each renewal replaces", f.Dir)
	case errors.Is(err, os.ErrNotExist):
		return certPEM, nil
	case err != nil:
		return nil, fmt.Errorf("load webhook CA: %w", err)
	}
	return ca, nil
}

// Run reloads the files every Interval, and serves a held certificate when its time comes,
// until ctx ends; a failure to load is logged and the previous certificate kept.
func (f *FileCerts) Run(ctx context.Context) error {
	interval := f.Interval
	if interval <= 0 {
		interval = DefaultFileCheckInterval
	}
	f.loop(ctx, func() time.Duration {
		if err := f.Load(); err != nil {
			f.logger().Warn("webhook certificate files not reloaded; the previous certificate serves", "error", err.Error())
		}
		return interval
	}, func() { f.logger().Info("webhook certificate of the new CA serving", "dir", f.Dir) })
	return nil
}

func (f *FileCerts) logger() *slog.Logger {
	if f.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Logger
}
