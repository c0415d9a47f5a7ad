package sharding

import (
	"context"
	"time"
)

// Plans (Config.Planner). The lowest member of the ring a member observes makes that ring's
// plan once, from the plan before it, and writes it to its Lease with the ring's fingerprint;
// every member, the lowest included, moves to the observed ring only with the plan written
// for exactly that ring. Until then it keeps the ring it moves to, and ticks as often as
// during a move. Members that observe different rings wait for each other as they would
// without plans: a plan names its ring, so no member acts on a plan made for another.
//
// With Config.Replan the lowest member asks the Planner again, that often, for the ring it
// planned, while no move is in progress, giving it the plan in force: what the plan depends
// on (the namespaces) changes without the ring changing. A different answer is a new plan for
// the same members, written as the first was; the members move to it as to a new ring (the
// View's fingerprint names the plan).

// planNeededLocked reports whether this member must make ring's plan (it is the ring's lowest
// member and has none for it), and the plan to start from: the one it moves to or acts on,
// else the one another member of the ring wrote last. Called with mu held.
func (m *Member) planNeededLocked(ring Ring, plans map[string]ringPlan, now time.Time) (prev string, need bool) {
	if m.cfg.Planner == nil || len(ring) == 0 {
		return "", false
	}
	if ring[0] != m.cfg.Identity {
		m.plan = ringPlan{} // another member plans this ring; ours would only weigh on renewals
		return "", false
	}
	if m.plan.ring == ring.Fingerprint() {
		due := m.cfg.Replan > 0 && now.Sub(m.plannedAt) >= m.cfg.Replan && !m.movingLocked()
		return m.plan.plan, due
	}
	for _, v := range []View{m.target, m.active} {
		if v.Plan != "" {
			return v.Plan, true
		}
	}
	for _, id := range ring {
		if p := plans[id]; p.plan != "" {
			return p.plan, true
		}
	}
	return "", true
}

// makePlan calls the Planner for ring, without the lock, and keeps the plan to write; a
// failure is logged and tried again on the next tick.
func (m *Member) makePlan(ctx context.Context, ring Ring, prev string, now time.Time) {
	plan, err := m.cfg.Planner(ctx, ring, prev)
	if err == nil && m.cfg.Placer != nil {
		_, err = m.cfg.Placer(ring, plan)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.warnOnceLocked("plan shard ring; will retry", ring, err)
		return
	}
	m.warned = ""
	if fp := ring.Fingerprint(); m.plan.ring == fp && m.plan.plan != plan {
		m.logger.Info("shard ring planned again", "members", len(ring))
	}
	m.plan, m.plannedAt = ringPlan{ring: ring.Fingerprint(), plan: plan}, now
}

// viewLocked returns the view of ring members act on: with its plan, false while the ring's
// lowest member has written none for it (or one the Placer refuses). Called with mu held.
func (m *Member) viewLocked(ring Ring, plans map[string]ringPlan) (View, bool) {
	v := View{Ring: ring}
	if m.cfg.Planner != nil && len(ring) > 0 { // an empty ring (every member leaving) needs no plan
		rp := plans[ring[0]]
		if ring[0] == m.cfg.Identity {
			rp = m.plan
		}
		if rp.ring != ring.Fingerprint() {
			return View{}, false
		}
		v.Plan = rp.plan
	}
	if v.Equal(m.target) {
		return m.target, true // with its owner function
	}
	if m.cfg.Placer == nil || len(ring) == 0 {
		return v, true
	}
	owner, err := m.cfg.Placer(ring, v.Plan)
	if err != nil {
		m.warnOnceLocked("shard plan refused; keeping the ring moved to", ring, err)
		return View{}, false
	}
	m.warned = ""
	v.owner = owner
	return v, true
}

// warnOnceLocked logs msg for ring and err unless it was the last warning logged: a plan
// refused, or a planner failing, is met again on every tick (several a second while a ring
// waits for its plan), and a plan anyone may write to a Lease must not flood the log.
// Called with mu held.
func (m *Member) warnOnceLocked(msg string, ring Ring, err error) {
	key := msg + "\x00" + ring.Fingerprint() + "\x00" + err.Error()
	if key == m.warned {
		return
	}
	m.warned = key
	m.logger.Warn(msg, "members", len(ring), "lowest", ring[0], "error", err.Error())
}
