package sharding

import "time"

// Keys named while another member handled them. A key's events reach every replica, but only
// the one handling the key queues it: while the key moves, or while its owner is dead and its
// Lease not yet expired, nobody does. The replay of gained keys covers the keys of cached
// objects; Accept remembers the others (an object deleted meanwhile, a key enqueued without an
// object), so that the member that gains them lists them in its Gain (Named) and the engine
// queues them. Only the events a replica receives are remembered: the keys the old owner had
// queued, waiting for a requeueAfter or a backoff, are its own and go with it.

// maxNamed bounds the keys remembered; past it, more are not remembered until a tick has
// forgotten older ones (logged once per overflow).
const maxNamed = 1 << 16

// namedWindow is how long a key named is remembered: a dead member's keys are gained within
// the lease duration plus a few retry periods of its last renewal.
func (m *Member) namedWindow() time.Duration { return 2 * m.cfg.LeaseDuration }

// Accept reports whether this member queues key now, as Handles; when it does not, it
// remembers that an event named key, for the Gain that gives it the key.
func (m *Member) Accept(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	if m.handlesLocked(key, now) {
		return true
	}
	if _, ok := m.named[key]; !ok && len(m.named) >= maxNamed {
		if m.namedFull { // until a tick forgets enough: a full scan per event would be quadratic
			return false
		}
		m.forgetNamedLocked(now)
		if len(m.named) >= maxNamed {
			m.namedFull = true
			m.logger.Warn("too many keys named while other replicas handle them; not remembering more", "max", maxNamed)
			return false
		}
	}
	m.named[key] = now
	return false
}

// forgetNamedLocked forgets the keys named longer ago than the window. Called with mu held.
func (m *Member) forgetNamedLocked(now time.Time) {
	for key, at := range m.named {
		if now.Sub(at) > m.namedWindow() {
			delete(m.named, key)
		}
	}
	if len(m.named) < maxNamed {
		m.namedFull = false
	}
}

// takeNamedLocked returns, and forgets, the keys named within the window that g gains.
// Called with mu held.
func (m *Member) takeNamedLocked(g Gain, now time.Time) []string {
	var out []string
	for key, at := range m.named {
		if now.Sub(at) > m.namedWindow() {
			delete(m.named, key)
		} else if g.Has(key) {
			out = append(out, key)
			delete(m.named, key)
		}
	}
	return out
}
