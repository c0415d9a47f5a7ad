package sharding

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The hand-over protocol. With Config.AwaitListed a member moving to a new ring first waits
// until every other member of it has recorded its caches listed for it (Listed), handling
// meanwhile what it handled before, and only then narrows as below. Each member writes in its Lease the fingerprint of the ring it has
// drained to: "I handle no key that is not mine in that ring". A member moving to a new ring
// first narrows what it handles to the keys that are its own in both the old and the new ring
// (and in any ring seen in between), waits for the calls in flight on the keys it dropped (at
// most DrainTimeout), and records the new ring's fingerprint. It starts the keys it gains only
// once every other member of the new ring has recorded that same fingerprint. A member missing
// from the new ring either released its Lease after it stopped handling, or its Lease expired
// here: counted from when this member saw its last renewal, so after the holder's own renew
// deadline, when it has stopped handling by itself.

// maxNarrowed bounds the rings remembered during one move; a ring that keeps changing past it
// makes the member drop every key and gain them again once the ring settles.
const maxNarrowed = 8

// tick renews the Lease, reads the ring and moves keys as far as it can; it reports whether a
// move is still in progress.
func (m *Member) tick(ctx context.Context) (pending bool) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.RenewDeadline)
	defer cancel()
	start := m.clock.Now()
	leases, err := m.store.List(ctx)
	if err != nil {
		m.failed(err)
		return false
	}
	obs := m.read(ctx, leases, start) // returns with mu held
	if m.held && m.othersListed(obs.listed) {
		m.narrowLocked(start)
	}
	next := m.published
	if !m.held && m.drainedLocked(start) {
		next = m.target.Fingerprint()
	}
	l := Lease{Name: m.lease, Holder: m.cfg.Identity, Renewed: start, Duration: m.cfg.LeaseDuration, Drained: next,
		Listed: m.listed, Plan: m.plan.String(), Leaving: m.leaving}
	cur, err := m.currentLocked(leases)
	if cur != nil {
		l.ResourceVersion, l.others = cur.ResourceVersion, cur.others
	}
	if err == nil {
		m.attempted = append(m.attempted[max(0, len(m.attempted)-maxAttempted+1):], start)
	}
	m.mu.Unlock()
	if err != nil {
		m.failed(err)
		return false
	}

	got, err := m.write(ctx, l, cur == nil)
	if err != nil {
		m.failed(err)
		return false
	}
	m.mu.Lock()
	m.own, m.lastRenew, m.published, m.lastErr = &got, start, next, nil
	m.attempted = m.attempted[:0] // a write still in flight has an older resource version: it conflicts
	// Not on the tick that created the Lease: the ring was read before it existed, so a member
	// starting at the same moment may have read it without this one too, and each would gain
	// a ring of its own. Once the List shows its own Lease, any member that lists after it
	// sees it, and two members cannot both miss each other (Lists are linearizable).
	if cur != nil && m.published == m.target.Fingerprint() && m.movingLocked() && m.othersDrained(obs.drained, obs.leavers) {
		m.gain()
	}
	if m.leftLocked() {
		m.leftOnce.Do(func() { close(m.left) })
	}
	pending = m.movingLocked() || m.unplanned
	m.mu.Unlock()
	m.deleteStale(ctx, obs.stale)
	return pending
}

// observation is what a tick read of the ring's Leases: what each member recorded drained
// and listed, the members leaving, and the Leases expired long enough to be deleted.
type observation struct {
	drained, listed map[string]string
	leavers         []string
	stale           []Lease
}

// read fences the member if its renew deadline passed, reads the ring from leases, makes the
// ring's plan if this member is to (without the lock: it may ask the API server), and moves
// the target to the ring read once it has its plan. It returns with mu held.
func (m *Member) read(ctx context.Context, leases []Lease, start time.Time) observation {
	m.mu.Lock()
	// A member past its renew deadline is fenced before this tick's renewal could make it
	// valid again: it must join anew, whether or not anything asked it meanwhile.
	m.validLocked(start)
	m.forgetNamedLocked(start)
	ring, plans, obs := m.observe(leases, start)
	prev, planning := m.planNeededLocked(ring, plans, start)
	m.mu.Unlock()
	if planning {
		m.makePlan(ctx, ring, prev, start)
	}
	m.mu.Lock()
	view, planned := m.viewLocked(ring, plans)
	if planned {
		m.retarget(view, start)
	}
	m.unplanned = !planned
	return obs
}

// currentLocked returns this member's Lease as the List just read it, nil when there is none
// (not created yet, or deleted). The renewal is conditional on that resource version rather
// than on the one of the member's last write: a renewal stored whose reply was lost, or
// someone annotating the Lease, changed it, and a renewal on the stale one would conflict
// until the renew deadline. A Lease renewed at another time than this member's last two
// writes is another process's of the same identity: not taken over. Called with mu held.
func (m *Member) currentLocked(leases []Lease) (*Lease, error) {
	for i := range leases {
		cur := &leases[i]
		if cur.Name != m.lease {
			continue
		}
		if m.own != nil && !m.wroteLocked(cur.Renewed) {
			return nil, fmt.Errorf("renew shard lease %s: renewed at %s by another process of identity %s",
				m.lease, cur.Renewed.Format(time.RFC3339Nano), m.cfg.Identity)
		}
		return cur, nil
	}
	return nil, nil
}

// maxAttempted bounds the writes remembered since the last that succeeded: each is conditional
// on the resource version the List read before it, so one whose reply was lost may still be
// stored later, until a write succeeds.
const maxAttempted = 8

// wroteLocked reports whether renewed is the renew time of this member's last successful
// write or of one tried since. Called with mu held.
func (m *Member) wroteLocked(renewed time.Time) bool {
	if sameInstant(renewed, m.own.Renewed) {
		return true
	}
	for _, at := range m.attempted {
		if sameInstant(renewed, at) {
			return true
		}
	}
	return false
}

// sameInstant compares times as a Lease stores them: to the microsecond.
func sameInstant(a, b time.Time) bool {
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}

// write creates or renews the Lease; a Lease of this name left by an earlier process of the
// same identity is taken over.
func (m *Member) write(ctx context.Context, l Lease, create bool) (Lease, error) {
	if !create {
		return m.store.Update(ctx, l)
	}
	got, err := m.store.Create(ctx, l)
	if !apierrors.IsAlreadyExists(err) {
		return got, err
	}
	leases, err := m.store.List(ctx)
	if err != nil {
		return Lease{}, err
	}
	for _, old := range leases {
		if old.Name == l.Name {
			l.ResourceVersion = old.ResourceVersion
			return m.store.Update(ctx, l)
		}
	}
	return Lease{}, err
}

func (m *Member) failed(err error) {
	m.mu.Lock()
	m.lastErr = err
	m.mu.Unlock()
	m.logger.Warn("shard lease not renewed; will retry", "lease", m.lease, "error", err.Error())
}

// observe returns the ring of live members (this one included, unless it leaves), the plan
// each wrote, and the observation: what each recorded as drained and as listed, the members
// leaving, and the Leases expired long enough to be deleted. Called with mu held.
func (m *Member) observe(leases []Lease, now time.Time) (Ring, map[string]ringPlan, observation) {
	var ids []string
	if !m.leaving {
		ids = append(ids, m.cfg.Identity)
	}
	obs := observation{drained: map[string]string{}, listed: map[string]string{}}
	plans := map[string]ringPlan{}
	m.nextExpiry = time.Time{}
	present := map[string]bool{}
	for _, l := range leases {
		if l.Name == m.lease {
			continue
		}
		present[l.Name] = true
		s, ok := m.seen[l.Name]
		if !ok || s.version != l.ResourceVersion {
			s = seenLease{version: l.ResourceVersion, at: now}
			m.seen[l.Name] = s
		}
		d := l.Duration
		if d <= 0 {
			d = m.cfg.LeaseDuration
		}
		switch age := now.Sub(s.at); {
		case l.Holder == "" || age >= 2*d:
			obs.stale = append(obs.stale, l)
		case age < d:
			if l.Leaving {
				obs.leavers = append(obs.leavers, l.Holder)
			} else {
				ids = append(ids, l.Holder)
			}
			obs.drained[l.Holder], obs.listed[l.Holder], plans[l.Holder] = l.Drained, l.Listed, parseRingPlan(l.Plan)
			if exp := s.at.Add(d); m.nextExpiry.IsZero() || exp.Before(m.nextExpiry) {
				m.nextExpiry = exp
			}
		}
	}
	for name := range m.seen {
		if !present[name] {
			delete(m.seen, name)
		}
	}
	return NewRing(ids...), plans, obs
}

// retarget starts a move when the observed ring differs from the one the member moves to.
// Called with mu held.
func (m *Member) retarget(view View, now time.Time) {
	if view.Equal(m.target) {
		return
	}
	m.logger.Info("shard ring changed", "members", len(view.Ring), "was", len(m.target.Ring), "planned", view.Plan != "")
	m.target, m.drainFrom, m.abandoned = view, now, false
	select {
	case m.retargets <- struct{}{}:
	default:
	}
	m.held = false
	if view.Equal(m.active) && len(m.narrowed) == 0 {
		return
	}
	if m.cfg.AwaitListed && len(m.active.Ring) > 0 {
		m.held = true // narrowLocked once the others list it (a member joining handles nothing yet)
		return
	}
	m.narrowLocked(now)
}

// narrowLocked narrows what the member handles to the keys it owns in target too, and starts
// the drain of those it drops. Called with mu held.
func (m *Member) narrowLocked(now time.Time) {
	m.held, m.drainFrom = false, now
	m.narrowed = append(m.narrowed, m.target)
	if len(m.narrowed) > maxNarrowed {
		m.active, m.narrowed = View{}, nil // handle nothing until the ring settles
	}
}

// othersListed reports whether every other member of the target ring recorded its caches
// listed for it. Called with mu held.
func (m *Member) othersListed(listed map[string]string) bool {
	fp := m.target.Fingerprint()
	for _, id := range m.target.Ring {
		if id != m.cfg.Identity && listed[id] != fp {
			return false
		}
	}
	return true
}

// movingLocked reports whether a move is in progress: the ring differs from the one the member
// acts on, or changed and changed back (the keys dropped meanwhile are to be taken again).
// Called with mu held.
func (m *Member) movingLocked() bool {
	return !m.target.Equal(m.active) || len(m.narrowed) > 0
}

// drainedLocked reports whether no call is in flight on a key the member no longer handles,
// or the wait for them has passed DrainTimeout. Called with mu held.
func (m *Member) drainedLocked(now time.Time) bool {
	for key := range m.inflight {
		if !m.handlesLocked(key, now) {
			if now.Sub(m.drainFrom) < m.cfg.DrainTimeout {
				return false
			}
			if !m.abandoned {
				m.abandoned = true
				m.logger.Warn("calls on moved keys still running past the drain timeout; abandoned", "key", key, "timeout", m.cfg.DrainTimeout)
			}
		}
	}
	return true
}

// othersDrained reports whether every other member of the target ring, and every leaving
// member still renewing, recorded it drained. Called with mu held.
func (m *Member) othersDrained(drained map[string]string, leavers []string) bool {
	fp := m.target.Fingerprint()
	for _, id := range append(slices.Clone([]string(m.target.Ring)), leavers...) {
		if id != m.cfg.Identity && drained[id] != fp {
			return false
		}
	}
	return true
}

// gain makes the target ring the active one and tells the engine which keys it gained.
// Called with mu held.
func (m *Member) gain() {
	m.gen++
	m.expired = false // joined again after a lapse: it gains every key it owns
	g := Gain{Generation: m.gen, self: m.cfg.Identity, before: m.active, beforeNarrowed: slices.Clone(m.narrowed), after: m.target}
	g.Named = m.takeNamedLocked(g, m.clock.Now())
	m.active, m.narrowed = m.target, nil
	m.gains = append(m.gains, g)
	m.logger.Info("shard ring applied", "members", len(m.active.Ring), "generation", m.gen)
	select {
	case m.notify <- struct{}{}:
	default:
	}
}

// deleteStale deletes Leases expired for two lease durations (a replica killed without
// releasing); a Lease renewed meanwhile has another resource version and is kept.
func (m *Member) deleteStale(ctx context.Context, stale []Lease) {
	for _, l := range stale {
		if err := m.store.Delete(ctx, l.Name, l.ResourceVersion); err == nil {
			m.logger.Info("deleted expired shard lease", "lease", l.Name, "holder", l.Holder)
		}
	}
}
