package admission

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Certificates made by the runner: a CA and a serving certificate it signs, PEM-encoded.

// keyPair is a certificate and its key, PEM-encoded.
type keyPair struct{ cert, key []byte }

func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
}

// newCA makes a self-signed CA valid from now for validity.
func newCA(name string, now time.Time, validity time.Duration) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return keyPair{}, fmt.Errorf("generate CA serial: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name + " webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign CA: %w", err)
	}
	return encodePair(der, key)
}

// newServing makes a serving certificate for hosts (DNS names or IP addresses), signed by ca.
func newServing(ca keyPair, hosts []string, now time.Time, validity time.Duration) (keyPair, error) {
	caCert, err := tls.X509KeyPair(ca.cert, ca.key)
	if err != nil {
		return keyPair{}, fmt.Errorf("load CA: %w", err)
	}
	parent, err := x509.ParseCertificate(caCert.Certificate[0])
	if err != nil {
		return keyPair{}, fmt.Errorf("parse CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate serving key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return keyPair{}, fmt.Errorf("generate serving serial: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, caCert.PrivateKey)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign serving certificate: %w", err)
	}
	return encodePair(der, key)
}

func encodePair(der []byte, key *ecdsa.PrivateKey) (keyPair, error) {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return keyPair{}, fmt.Errorf("encode key: %w", err)
	}
	return keyPair{cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}, nil
}

// leafOf parses the first certificate of a PEM bundle.
func leafOf(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return nil, fmt.Errorf("parse certificate: no PEM block")
	}
	return x509.ParseCertificate(block.Bytes)
}
