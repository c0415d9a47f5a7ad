package admission

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gateCert is a served certificate signed by ca.
func gateCert(t *testing.T, ca keyPair) *servedCert {
	t.Helper()
	serving, err := newServing(ca, []string{"127.0.0.1"}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(serving.cert, serving.key)
	if err != nil {
		t.Fatal(err)
	}
	return &servedCert{cert: &cert, ca: ca.cert}
}

func newTestCA(t *testing.T, name string) keyPair {
	t.Helper()
	ca, err := newCA(name, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// presented is the serial of the certificate g serves.
func presented(t *testing.T, g *servingGate) string {
	t.Helper()
	c, err := g.present()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.SerialNumber.String()
}

func serial(t *testing.T, c *servedCert) string {
	t.Helper()
	leaf, err := x509.ParseCertificate(c.cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.SerialNumber.String()
}

// TestServingGateHoldsANewCAUntilRegistered: a certificate of a new CA is not served before
// the registrar reports a bundle carrying that CA, and then only after the settle time; the
// bundle meanwhile carries both CAs. A renewal with the same CA serves at once.
func TestServingGateHoldsANewCAUntilRegistered(t *testing.T) {
	t.Parallel()
	oldCA, newCA := newTestCA(t, "old"), newTestCA(t, "new")
	g := &servingGate{}
	how := holdNewCA{hold: true, settle: 300 * time.Millisecond}
	first := gateCert(t, oldCA)
	if g.offer(first, how) {
		t.Error("the first certificate reported a CA change")
	}
	renewed := gateCert(t, oldCA)
	if g.offer(renewed, how) || presented(t, g) != serial(t, renewed) {
		t.Fatal("a renewal with the same CA is not served at once")
	}
	next := gateCert(t, newCA)
	if !g.offer(next, how) {
		t.Error("a new CA did not report a change")
	}
	if presented(t, g) != serial(t, renewed) {
		t.Fatal("the new CA's certificate serves before its registration")
	}
	if !bundleHas(g.CABundle(), oldCA.cert) || !bundleHas(g.CABundle(), newCA.cert) {
		t.Fatal("the bundle does not carry both CAs while the new one is held")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.loop(ctx, func() time.Duration { return time.Hour }, func() {})
	}()
	defer func() { cancel(); <-done }()

	g.Registered(oldCA.cert) // a bundle without the new CA changes nothing
	registered := time.Now()
	g.Registered(g.CABundle())
	for presented(t, g) != serial(t, next) {
		if time.Since(registered) > 5*time.Second {
			t.Fatal("the new CA's certificate does not serve 5 s after its registration")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if waited := time.Since(registered); waited < how.settle {
		t.Errorf("served %v after the registration, before the settle time %v", waited, how.settle)
	}
	if got := g.CABundle(); !bundleHas(got, newCA.cert) || bundleHas(got, oldCA.cert) {
		t.Error("after the move the replica still wants the old CA")
	}
}

// TestServingGateWithoutARegistrarServesANewCAAtOnce: with nobody to write the bundle, there
// is nothing to wait for.
func TestServingGateWithoutARegistrarServesANewCAAtOnce(t *testing.T) {
	t.Parallel()
	g := &servingGate{}
	g.offer(gateCert(t, newTestCA(t, "old")), holdNewCA{})
	next := gateCert(t, newTestCA(t, "new"))
	if !g.offer(next, holdNewCA{}) || presented(t, g) != serial(t, next) {
		t.Error("a new CA was held without a registrar")
	}
}

// TestFileCertsWithoutCARefuseWhenRegistering: a folder without ca.crt fails to load, saying
// why, when the runner registers the entries (the caBundle would pin tls.crt).
func TestFileCertsWithoutCARefuseWhenRegistering(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writePair(t, dir, newTestCA(t, "files"))
	if err := os.Remove(filepath.Join(dir, "ca.crt")); err != nil {
		t.Fatal(err)
	}
	err := (&FileCerts{Dir: dir, RequireCA: true}).Load()
	if err == nil || !strings.Contains(err.Error(), "has no ca.crt") {
		t.Errorf("Load without ca.crt: %v, want an error naming ca.crt", err)
	}
	if err := (&FileCerts{Dir: dir}).Load(); err != nil {
		t.Errorf("Load without ca.crt, registering nothing: %v", err)
	}
}

// TestFileCertsHoldANewCAUntilRegistered: files whose ca.crt changes (a new CA, as
// cert-manager writes on a CA rotation) keep the previous pair serving until the bundle with
// both CAs is registered; OnCAChange asks for that bundle.
func TestFileCertsHoldANewCAUntilRegistered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldCA, newCA := newTestCA(t, "old"), newTestCA(t, "new")
	first := writePair(t, dir, oldCA)
	changed := make(chan struct{}, 1)
	f := &FileCerts{Dir: dir, RequireCA: true, HoldNewCA: true, Settle: 50 * time.Millisecond,
		OnCAChange: func() { changed <- struct{}{} }}
	if err := f.Load(); err != nil {
		t.Fatal(err)
	}
	second := writePair(t, dir, newCA)
	if err := f.Load(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Error("a new CA in the files did not call OnCAChange")
	}
	if presented(t, &f.servingGate) != first.SerialNumber.String() || !bundleHas(f.CABundle(), oldCA.cert) || !bundleHas(f.CABundle(), newCA.cert) {
		t.Fatal("the new CA's pair serves before its registration, or the bundle lacks a CA")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	f.Registered(f.CABundle())
	for deadline := time.Now().Add(5 * time.Second); presented(t, &f.servingGate) != second.SerialNumber.String(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the new CA's pair does not serve 5 s after its registration")
		}
	}
}
