package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// clientPKI is a CA and a client certificate it signed, as PEM.
type clientPKI struct {
	caPEM, certPEM, keyPEM []byte
}

func newClientPKI(t *testing.T) clientPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook clients"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return clientPKI{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}
}

// writeBytes writes data to path, readable by the owner only, and returns path.
func writeBytes(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// admissionConfigFile writes an AdmissionConfiguration that has kube-apiserver present
// pki's client certificate to every webhook ("*"), as docs/admission.md shows.
func admissionConfigFile(t *testing.T, dir string, pki clientPKI) string {
	t.Helper()
	kubeconfig := writeBytes(t, filepath.Join(dir, "webhook-kubeconfig.yaml"), fmt.Appendf(nil, `apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %s
    client-key: %s
`, writeBytes(t, filepath.Join(dir, "client.crt"), pki.certPEM), writeBytes(t, filepath.Join(dir, "client.key"), pki.keyPEM)))
	var plugins strings.Builder
	for _, name := range []string{"ValidatingAdmissionWebhook", "MutatingAdmissionWebhook"} {
		fmt.Fprintf(&plugins, `- name: %s
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`, name, kubeconfig)
	}
	return writeBytes(t, filepath.Join(dir, "admission-config.yaml"), []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
`+plugins.String()))
}

// With --webhook-client-ca the webhook server serves only callers presenting a certificate
// that CA signed: a kube-apiserver configured (AdmissionConfiguration) to present one gets
// the script's answers, the one without it fails its webhook call (Fail: the write is
// refused), and a plain TLS client is refused at the handshake.
func TestWebhookClientCA(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	dir := t.TempDir()
	pki := newClientPKI(t)
	withCert, err := cp.StartExtraAPIServer(t.Context(), "--admission-control-config-file="+admissionConfigFile(t, dir, pki))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = withCert.Stop() })

	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-clientca", "jsinformer-clientca"
	admissionNamespace(t, client, ns, name)
	scripts := t.TempDir()
	writeBytes(t, filepath.Join(scripts, "policy.js"), []byte(policyScript(ns, `    return { allowed: false, message: "the script answered" };`, `{ failurePolicy: "Fail", timeoutSeconds: 5 }`)))
	addr := freePort(t)
	startAdmissionWith(t, cp.Config, scripts, webhookFlags{addr: addr, url: "https://" + addr, name: name,
		clientCA: writeBytes(t, filepath.Join(dir, "client-ca.crt"), pki.caPEM)}, nil)

	create := func(c kubernetes.Interface, n int) error {
		_, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", n)}}, metav1.CreateOptions{})
		return err
	}
	viaCert := kubernetes.NewForConfigOrDie(withCert.Config)
	var lastErr error
	for n, deadline := 0, time.Now().Add(30*time.Second); ; n++ {
		if lastErr = create(viaCert, n); apierrors.IsForbidden(lastErr) && strings.Contains(lastErr.Error(), "the script answered") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("through the API server presenting the client certificate: %v, want the script's denial", lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := create(client, 1000); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("through the API server without a client certificate: %v, want its webhook call failed", err)
	}

	probe := admissionProbe{addr: addr}
	if err := probe.handshake(nil); err == nil {
		t.Error("a TLS client without a certificate completed a request")
	}
	cert, err := tls.X509KeyPair(pki.certPEM, pki.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.handshake(&cert); err != nil {
		t.Errorf("a TLS client with the certificate: %v", err)
	}
}

// admissionProbe talks TLS to a webhook server without checking its certificate.
type admissionProbe struct{ addr string }

// handshake connects with cert (none when nil) and sends a request: the server's refusal of
// the certificate shows at the first read in TLS 1.3.
func (p admissionProbe) handshake(cert *tls.Certificate) error {
	cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // a probe of the client check only
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	c, err := tls.Dial("tcp", p.addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 12)
	if _, err := c.Read(buf); err != nil {
		return err
	}
	if !strings.HasPrefix(string(buf), "HTTP/1.1") {
		return errors.New("no HTTP answer: " + string(buf))
	}
	return nil
}
