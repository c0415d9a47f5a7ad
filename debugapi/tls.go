package debugapi

import (
	"crypto/tls"
	"fmt"
	"net"

	certutil "k8s.io/client-go/util/cert"
)

// TLSListener wraps l in TLS: with the given certificate files, or a self-signed certificate
// made now for host (clients then pass --insecure-skip-tls-verify, or the certificate the
// runner logs nothing of: bring your own files for verification). Requests on a non-loopback
// address carry bearer tokens, which must not cross the network in clear.
func TLSListener(l net.Listener, certFile, keyFile, host string) (net.Listener, error) {
	var cert tls.Certificate
	var err error
	if certFile != "" || keyFile != "" {
		cert, err = tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("load the debug API's certificate: %w", err)
		}
	} else {
		certPEM, keyPEM, genErr := certutil.GenerateSelfSignedCertKey(host, nil, nil)
		if genErr != nil {
			return nil, fmt.Errorf("make the debug API's self-signed certificate: %w", genErr)
		}
		if cert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
			return nil, fmt.Errorf("load the debug API's self-signed certificate: %w", err)
		}
	}
	return tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), nil
}
