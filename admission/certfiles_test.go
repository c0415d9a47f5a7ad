package admission

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func writePair(t *testing.T, dir string, ca keyPair) *x509.Certificate {
	t.Helper()
	serving, err := newServing(ca, []string{"127.0.0.1"}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tls.crt": serving.cert, "tls.key": serving.key, "ca.crt": ca.cert} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	leaf, err := leafOf(serving.cert)
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func TestFileCertsReloadWhenTheFilesChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := newCA("test", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	first := writePair(t, dir, ca)
	var changes atomic.Int32
	f := &FileCerts{Dir: dir, Interval: 10 * time.Millisecond, OnCAChange: func() { changes.Add(1) }}
	if err := f.Load(); err != nil {
		t.Fatal(err)
	}
	served := func() string {
		c, err := f.GetCertificate(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.SerialNumber.String()
	}
	if served() != first.SerialNumber.String() || string(f.CABundle()) != string(ca.cert) {
		t.Fatal("the first certificate is not served")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	if err := os.WriteFile(filepath.Join(dir, "tls.key"), []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // several checks: a broken pair must keep the old one serving
	if served() != first.SerialNumber.String() {
		t.Fatal("a broken key replaced the serving certificate")
	}
	second := writePair(t, dir, ca)
	for deadline := time.Now().Add(5 * time.Second); served() != second.SerialNumber.String(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the new certificate was not picked up within 5s")
		}
	}
	if n := changes.Load(); n != 0 {
		t.Errorf("OnCAChange called %d times for an unchanged CA", n)
	}
}
