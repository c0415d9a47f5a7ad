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
	"sync/atomic"
	"time"
)

// FileCerts serves the certificate of a folder (tls.crt, tls.key, and ca.crt for the
// caBundle, else tls.crt), as cert-manager or a mounted Secret provides it, and reloads it
// when the files change, as controller-runtime's certwatcher does: by content, checked every
// Interval, so the atomic symlink swap of a Secret volume is seen like an in-place write. A
// half-written pair that does not load keeps the previous certificate serving.
//
// Goroutines: Run is the one loop (the caller's goroutine); GetCertificate and CABundle are
// safe from any goroutine.
type FileCerts struct {
	Dir      string
	Interval time.Duration // zero means DefaultFileCheckInterval
	Logger   *slog.Logger
	// OnCAChange is called when the CA bundle changes (the registrar updates the entries).
	OnCAChange func()

	cur  atomic.Pointer[servedCert]
	seen []byte // the contents last loaded, to notice a change; Run's
}

// DefaultFileCheckInterval is how often FileCerts looks at its files.
const DefaultFileCheckInterval = 10 * time.Second

// GetCertificate is tls.Config.GetCertificate: the certificate loaded last.
func (f *FileCerts) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cur := f.cur.Load(); cur != nil {
		return cur.cert, nil
	}
	return nil, fmt.Errorf("serve webhook: no certificate loaded from %s", f.Dir)
}

// CABundle is the PEM CA the entries carry.
func (f *FileCerts) CABundle() []byte {
	if cur := f.cur.Load(); cur != nil {
		return cur.ca
	}
	return nil
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
	ca, err := os.ReadFile(filepath.Join(f.Dir, "ca.crt"))
	if errors.Is(err, os.ErrNotExist) {
		ca, err = certPEM, nil
	}
	if err != nil {
		return fmt.Errorf("load webhook CA: %w", err)
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
	prev := f.cur.Swap(&servedCert{cert: &cert, ca: ca})
	if prev != nil {
		f.logger().Info("webhook certificate reloaded", "dir", f.Dir)
		if !bytes.Equal(prev.ca, ca) && f.OnCAChange != nil {
			f.OnCAChange()
		}
	}
	return nil
}

// Run reloads the files every Interval until ctx ends; a failure is logged and the previous
// certificate kept.
func (f *FileCerts) Run(ctx context.Context) error {
	interval := f.Interval
	if interval <= 0 {
		interval = DefaultFileCheckInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := f.Load(); err != nil {
			f.logger().Warn("webhook certificate files not reloaded; the previous certificate serves", "error", err.Error())
		}
	}
}

func (f *FileCerts) logger() *slog.Logger {
	if f.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Logger
}
