package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// servingGate is the certificate a server presents, shared by SecretCerts and FileCerts. A
// new certificate signed by the CA already served replaces the old one at once (a renewal:
// the caBundle trusts both). One signed by a new CA is held back when Hold is set, while the
// old one keeps serving: CABundle then carries both CAs, the registrar writes them
// (cabundle.go) and reports the bundle it registered (Registered), and the new certificate
// serves Settle later, once every API server has had time to see the new bundle. So no
// replica presents a certificate the API server's caBundle does not trust yet.
//
// Goroutines: loop is the one loop (its owner's Run); present, CABundle and Registered are
// safe from any goroutine.
type servingGate struct {
	cur atomic.Pointer[servedCert]

	mu        sync.Mutex
	pending   *servedCert   // signed by a CA not served yet; nil when none
	promoteAt time.Time     // when pending serves; zero until its CA is registered
	settle    time.Duration // from the last offer
	wake      chan struct{}
}

// holdNewCA is how an owner offers certificates: whether one with a new CA waits for
// Registered, and how long after it.
type holdNewCA struct {
	hold   bool
	settle time.Duration // zero means DefaultSettle
}

// DefaultSettle is how long a certificate with a new CA waits, once the registrar wrote the
// bundle carrying that CA, for the API servers to load the new configuration.
const DefaultSettle = 5 * time.Second

// present returns the certificate to serve; an error before the first offer.
func (g *servingGate) present() (*tls.Certificate, error) {
	if cur := g.cur.Load(); cur != nil {
		return cur.cert, nil
	}
	return nil, fmt.Errorf("serve webhook: no certificate yet")
}

// CABundle is the PEM CAs to trust: the served certificate's, and the held one's after it.
func (g *servingGate) CABundle() []byte {
	cur := g.cur.Load()
	if cur == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil || bytes.Equal(g.pending.ca, cur.ca) {
		return cur.ca
	}
	return bytes.Join([][]byte{bytes.TrimSpace(cur.ca), g.pending.ca}, []byte("\n"))
}

// offer serves c, or holds it when its CA is new and hold is set. It reports whether the
// CA bundle changed (the registrar must write it).
func (g *servingGate) offer(c *servedCert, how holdNewCA) (caChanged bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.settle = how.settle
	if g.settle <= 0 {
		g.settle = DefaultSettle
	}
	cur := g.cur.Load()
	switch {
	case cur == nil || bytes.Equal(cur.ca, c.ca):
		// The first certificate, or a renewal (or a return to the CA served: drop the held one).
		changed := g.pending != nil
		g.pending, g.promoteAt = nil, time.Time{}
		g.cur.Store(c)
		return changed
	case !how.hold:
		g.cur.Store(c)
		return true
	case g.pending != nil && bytes.Equal(g.pending.ca, c.ca):
		g.pending = c // renewed while held: the same CA, still registered or not
		return false
	default:
		g.pending, g.promoteAt = c, time.Time{}
		return true
	}
}

// Registered tells the gate the registrar wrote bundle into the webhook configurations: a
// certificate held for a CA bundle carries serves Settle later.
func (g *servingGate) Registered(bundle []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil || !g.promoteAt.IsZero() || !bundleHas(bundle, g.pending.ca) {
		return
	}
	g.promoteAt = time.Now().Add(g.settle)
	select {
	case g.wakeCh() <- struct{}{}:
	default:
	}
}

// wakeCh is the loop's nudge; call with mu held.
func (g *servingGate) wakeCh() chan struct{} {
	if g.wake == nil {
		g.wake = make(chan struct{}, 1)
	}
	return g.wake
}

// promote serves the held certificate if its time came, and returns how long until it does
// when that is sooner than limit.
func (g *servingGate) promote(limit time.Duration) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil || g.promoteAt.IsZero() {
		return limit, false
	}
	if wait := time.Until(g.promoteAt); wait > 0 {
		return min(wait, limit), false
	}
	g.cur.Store(g.pending)
	g.pending, g.promoteAt = nil, time.Time{}
	return limit, true
}

// loop calls check at once and then after each delay it returns, serves a held certificate
// when its time comes (onPromote is told), until ctx ends.
func (g *servingGate) loop(ctx context.Context, check func() time.Duration, onPromote func()) {
	g.mu.Lock()
	wake := g.wakeCh()
	g.mu.Unlock()
	timer := time.NewTimer(0)
	defer timer.Stop()
	next := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-wake:
		}
		if now := time.Now(); !now.Before(next) {
			next = now.Add(check())
		}
		wait, promoted := g.promote(time.Until(next))
		if promoted {
			onPromote()
		}
		timer.Reset(max(wait, 0))
	}
}
