package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
)

// Error kinds, for metrics.
const (
	KindRefused  = "refused"
	KindTimeout  = "timeout"
	KindTooLarge = "body_too_large"
	KindDNS      = "dns"
	KindTLS      = "tls"
	KindCanceled = "canceled"
	KindOther    = "other"
)

// Kind classifies a request error.
func Kind(err error) string {
	var (
		refused *RefusedError
		dns     *net.DNSError
		unknown x509.UnknownAuthorityError
		inval   x509.CertificateInvalidError
		host    x509.HostnameError
		rec     tls.RecordHeaderError
		verify  *tls.CertificateVerificationError
		ne      net.Error
	)
	switch {
	case errors.As(err, &refused):
		return KindRefused
	case errors.Is(err, ErrBodyTooLarge):
		return KindTooLarge
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.As(err, &dns):
		return KindDNS
	case errors.As(err, &unknown), errors.As(err, &inval), errors.As(err, &host),
		errors.As(err, &rec), errors.As(err, &verify):
		return KindTLS
	case errors.As(err, &ne) && ne.Timeout():
		return KindTimeout
	}
	return KindOther
}
