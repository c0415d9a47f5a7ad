package sharding

import (
	"context"
	"slices"
)

// Leaving. A replica that stops releases its Lease, and the others take its keys: with
// partitioned caches they start watching its keys only once they observe the ring without
// it, so an object deleted between its exit and their list would be seen by nobody. Leave
// closes that window for a replica that stops on purpose: the member marks its Lease leaving
// (LeavingAnnotation) and every member, itself included, observes the ring without it; the
// others move to that ring as to any other (listing what they gain, Config.AwaitListed),
// while the leaving member keeps handling its keys until they have listed them, then narrows
// to nothing, drains and records the ring drained. The others gain only once it has (a
// leaving member still renewing counts among those that must drain). Then Leave returns and
// the replica stops and releases its Lease as before.

// LeavingAnnotation marks the Lease of a member that is leaving the ring ("true").
const LeavingAnnotation = "jsinformer.io/leaving"

// Leave starts this member's departure and waits until it handles no key any more and has
// recorded the ring without it drained, or ctx ends; it reports whether the hand-over
// finished. A member alone in its ring, or not yet in one, has nothing to hand over.
func (m *Member) Leave(ctx context.Context) bool {
	m.mu.Lock()
	m.leaving = true
	alone := len(m.active.Ring) == 0 || slices.Equal(m.active.Ring, Ring{m.cfg.Identity})
	m.mu.Unlock()
	if alone {
		return true
	}
	m.wakeRun()
	select {
	case <-ctx.Done():
		return false
	case <-m.left:
		return true
	}
}

// leftLocked reports whether a leaving member has handed everything over: it moves to a ring
// without itself and has recorded it drained, or every member is leaving (nobody to hand
// over to). Called with mu held.
func (m *Member) leftLocked() bool {
	if !m.leaving || m.target.Ring.Has(m.cfg.Identity) {
		return false
	}
	return len(m.target.Ring) == 0 || m.published == m.target.Fingerprint()
}

// wakeRun makes Run tick now.
func (m *Member) wakeRun() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}
