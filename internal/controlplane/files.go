package controlplane

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// freePort asks the kernel for an unused loopback port. Another process may take it before
// we use it; the odds on a test machine are small and a start failure says so.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeServiceAccountKey writes an RSA key the apiserver uses to sign and verify tokens.
func writeServiceAccountKey(dir string) (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", fmt.Errorf("generate service account key: %w", err)
	}
	path := filepath.Join(dir, "sa.key")
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return "", fmt.Errorf("write service account key: %w", err)
	}
	return path, nil
}

// writeTokenFile writes a static token file granting one admin user system:masters.
func writeTokenFile(dir string) (token, path string, err error) {
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		return "", "", fmt.Errorf("generate token: %w", err)
	}
	token = hex.EncodeToString(buf)
	path = filepath.Join(dir, "tokens.csv")
	line := token + ",admin,admin,system:masters\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		return "", "", fmt.Errorf("write token file: %w", err)
	}
	return token, path, nil
}

func loopbackURL(scheme string, port int) string {
	return scheme + "://127.0.0.1:" + strconv.Itoa(port)
}
