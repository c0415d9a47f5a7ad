package sharding

import (
	"context"
	"strconv"
	"strings"
)

// View is a ring as its members act on it: the members, and the plan the ring's lowest member
// made for it (Config.Planner; "" without one). A plan places keys otherwise than rendezvous
// hashing does (Config.Placer): partitioned caches give each member of the ring an even share
// of the namespaces, which needs the namespaces, which only one member may read lest two
// members place one key on different owners. So each ring's plan is made once, by its lowest
// member, written to its Lease (PlanAnnotation), and read by the others: a member moves to a
// ring only once it has that ring's plan, and a new plan for the same members is a ring
// change like any other.
type View struct {
	Ring Ring
	Plan string
	// owner is Config.Placer's for Ring and Plan; nil: rendezvous over Ring.
	owner func(key string) string
}

// Owner returns the member owning key in the view, or "" for an empty ring.
func (v View) Owner(key string) string {
	if v.owner != nil && len(v.Ring) > 0 {
		return v.owner(key)
	}
	return v.Ring.Owner(key)
}

// Fingerprint names the view: the ring's fingerprint, and the plan's hash after a "-" when it
// has a plan. It is what members write once they have drained to it and listed it.
func (v View) Fingerprint() string {
	fp := v.Ring.Fingerprint()
	if fp == "" || v.Plan == "" {
		return fp
	}
	return fp + "-" + strconv.FormatUint(hash64(v.Plan), 16)
}

// Equal reports whether v and o have the same members and plan.
func (v View) Equal(o View) bool { return v.Ring.Equal(o.Ring) && v.Plan == o.Plan }

// Planner makes the plan of ring, given the plan of the ring before it (prev: "" for none), so
// that the new plan can keep what need not move. It may read the API server; it is called on
// the member's Run goroutine, without the member's lock.
type Planner func(ctx context.Context, ring Ring, prev string) (string, error)

// Placer returns the owner function of ring under plan; an error refuses the plan (a Lease
// anyone with write access could have written).
type Placer func(ring Ring, plan string) (func(key string) string, error)

// PlanAnnotation holds a ring's plan on its lowest member's Lease: the ring's fingerprint, a
// space, and the plan.
const PlanAnnotation = "jsinformer.io/shard-plan"

// ringPlan is what a Lease's PlanAnnotation says: the plan made for the ring of fingerprint
// ring.
type ringPlan struct{ ring, plan string }

func parseRingPlan(s string) ringPlan {
	ring, plan, _ := strings.Cut(s, " ")
	return ringPlan{ring: ring, plan: plan}
}

func (p ringPlan) String() string {
	if p.ring == "" {
		return ""
	}
	return p.ring + " " + p.plan
}
