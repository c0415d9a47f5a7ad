package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// TestSecretCertsAreSharedAndRenewedWithoutAFailedRequest: two replicas share one CA through
// the Secret; the serving certificate is renewed several times while a client keeps calling,
// each call on a new connection (a new handshake), and none fails.
func TestSecretCertsAreSharedAndRenewedWithoutAFailedRequest(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	name := "jsinformer-test-certs"
	t.Cleanup(func() {
		_ = client.CoreV1().Secrets("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	replica := func() *SecretCerts {
		return &SecretCerts{Client: client, Namespace: "default", Name: name, Hosts: []string{"127.0.0.1"},
			Validity: 6 * time.Second, RenewBefore: 4 * time.Second}
	}
	a, b := replica(), replica()
	if err := a.Ensure(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := b.Ensure(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(a.CABundle()) == 0 || !bytes.Equal(a.CABundle(), b.CABundle()) {
		t.Fatal("the two replicas do not share one CA")
	}

	script := &countingScript{realScript: newRealScript(t, serverPolicy)}
	s := NewServer(Config{Lookup: func(string) (Script, bool) { return script, true }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served, renewing := make(chan error, 1), make(chan error, 1)
	go func() {
		served <- s.Serve(ctx, ln, &tls.Config{GetCertificate: a.GetCertificate, MinVersion: tls.VersionTLS12}, time.Second)
	}()
	go func() { renewing <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
		if err := <-renewing; err != nil {
			t.Error(err)
		}
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a.CABundle())
	httpClient := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	serials := map[string]bool{}
	body := review(t, admissionv1.Create, "alice", configMap(nil))
	for end := time.Now().Add(7 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		resp, err := httpClient.Post("https://"+ln.Addr().String()+"/validate/p.js", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("a request failed during renewals: %v", err)
		}
		serials[resp.TLS.PeerCertificates[0].SerialNumber.String()] = true
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if len(serials) < 2 {
		t.Errorf("served %d serving certificates in 7 s, want renewals", len(serials))
	}
	if err := b.Ensure(t.Context()); err != nil || !bytes.Equal(a.CABundle(), b.CABundle()) {
		t.Errorf("after the renewals the CA changed or the second replica failed: %v", err)
	}
	leaf, _ := leafOf(mustSecret(t, client, name))
	if leaf == nil || len(leaf.IPAddresses) != 1 || leaf.IPAddresses[0].String() != "127.0.0.1" {
		t.Errorf("stored certificate %+v", leaf)
	}
}

func mustSecret(t *testing.T, client kubernetes.Interface, name string) []byte {
	t.Helper()
	sec, err := client.CoreV1().Secrets("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sec.Data["tls.crt"]
}

// TestSecretCertsHoldANewCAUntilRegistered: when the shared Secret is deleted, a replica
// makes a new CA but keeps serving the old one, with both in its CABundle, until the
// registrar reports that bundle registered; the other replica adopts the new CA the same
// way; both then serve it.
func TestSecretCertsHoldANewCAUntilRegistered(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	name := "jsinformer-test-newca"
	secrets := client.CoreV1().Secrets("default")
	t.Cleanup(func() { _ = secrets.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	replica := func() *SecretCerts {
		c := &SecretCerts{Client: client, Namespace: "default", Name: name, Hosts: []string{"127.0.0.1"},
			Check: 50 * time.Millisecond, HoldNewCA: true, Settle: 100 * time.Millisecond}
		if err := c.Ensure(t.Context()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := replica(), replica()
	oldCA := a.CABundle()
	ctx, cancel := context.WithCancel(t.Context())
	var done sync.WaitGroup
	for _, c := range []*SecretCerts{a, b} {
		done.Go(func() { _ = c.Run(ctx) })
	}
	defer func() { cancel(); done.Wait() }()
	servesCA := func(c *SecretCerts, ca []byte) bool {
		cert, err := c.GetCertificate(nil)
		return err == nil && verifies(cert, ca)
	}

	if err := secrets.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var newCA []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if sec, err := secrets.Get(t.Context(), name, metav1.GetOptions{}); err == nil && !bytes.Equal(sec.Data["ca.crt"], oldCA) {
			newCA = sec.Data["ca.crt"]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no replica made a new Secret within 10 s")
		}
	}
	for _, c := range []*SecretCerts{a, b} {
		for deadline := time.Now().Add(10 * time.Second); !bundleHas(c.CABundle(), newCA); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("a replica did not see the new CA within 10 s")
			}
		}
		if !bundleHas(c.CABundle(), oldCA) || !servesCA(c, oldCA) {
			t.Fatal("a replica serves the new CA before its registration, or dropped the old one from its bundle")
		}
	}
	a.Registered(a.CABundle())
	b.Registered(b.CABundle())
	for _, c := range []*SecretCerts{a, b} {
		for deadline := time.Now().Add(10 * time.Second); !servesCA(c, newCA); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("a replica does not serve the new CA 10 s after its registration")
			}
		}
		if bundleHas(c.CABundle(), oldCA) {
			t.Error("a replica serving the new CA still asks for the old one")
		}
	}
}

// verifies reports whether cert chains to ca.
func verifies(cert *tls.Certificate, ca []byte) bool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return false
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool})
	return err == nil
}
