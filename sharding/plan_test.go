package sharding

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// planLog records the Planner's calls of a test ring's members.
type planLog struct {
	mu    sync.Mutex
	calls []planCall
	fail  map[string]bool // members whose Planner fails
	gen   int             // in every plan made: a new one is another plan of the same ring
}

type planCall struct{ by, ring, prev, plan string }

// planner is member id's Planner: a plan that names its maker and ring, and places keys by
// namespace otherwise than rendezvous does (placeByPlan).
func (l *planLog) planner(id string) Planner {
	return func(_ context.Context, ring Ring, prev string) (string, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.fail[id] {
			return "", errors.New("planner down")
		}
		plan := fmt.Sprintf("by-%s-for-%s", id, strings.Join(ring, "."))
		if l.gen > 0 {
			plan = fmt.Sprintf("g%d-%s", l.gen, plan)
		}
		l.calls = append(l.calls, planCall{by: id, ring: ring.Fingerprint(), prev: prev, plan: plan})
		return plan, nil
	}
}

func (l *planLog) made() []planCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]planCall(nil), l.calls...)
}

func (l *planLog) setFail(id string, fail bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail[id] = fail
}

// placeByPlan is a Placer whose owners depend on the plan: a key's namespace and the plan
// hashed, modulo the ring's size; a plan not made for the ring is refused.
func placeByPlan(ring Ring, plan string) (func(string) string, error) {
	if !strings.HasSuffix(plan, "-for-"+strings.Join(ring, ".")) {
		return nil, fmt.Errorf("plan %q is not for ring %v", plan, ring)
	}
	return func(key string) string {
		ns, _, _ := strings.Cut(key, "/")
		return ring[mix(hash64(ns+plan))%uint64(len(ring))]
	}, nil
}

func newPlannedRing(t *testing.T) (*testRing, *planLog) {
	r := newTestRing(t, 140)
	log := &planLog{fail: map[string]bool{}}
	r.placer = placeByPlan
	return r, log
}

func (r *testRing) joinPlanned(log *planLog, id string) *Member {
	r.planner = log.planner(id)
	return r.join(id)
}

// TestEachRingIsPlannedOnceByItsLowestMember: every member acts on the plan the ring's lowest
// member made for exactly that ring, read from its Lease; the planner is called once per
// ring, by that member, given the plan before; no key is ever handled twice (step checks).
func TestEachRingIsPlannedOnceByItsLowestMember(t *testing.T) {
	t.Parallel()
	r, log := newPlannedRing(t)
	r.joinPlanned(log, "b")
	r.settle(5 * time.Second)
	r.joinPlanned(log, "c")
	r.joinPlanned(log, "a")
	r.settle(5 * time.Second)
	abc := NewRing("a", "b", "c")
	for id, m := range r.members {
		if got, want := m.Active().Plan, "by-a-for-a.b.c"; got != want {
			t.Fatalf("%s acts on plan %q, want %q", id, got, want)
		}
	}
	var planned []string
	for _, c := range log.made() {
		planned = append(planned, c.by+":"+c.ring)
	}
	if last := log.made()[len(log.made())-1]; last.by != "a" || last.ring != abc.Fingerprint() || last.prev == "" {
		t.Fatalf("the last plan was made by %s for ring %s from %q; want a, for %s, from the plan before", last.by, last.ring, last.prev, abc.Fingerprint())
	}
	for _, c := range log.made() {
		if c.by == "c" {
			t.Fatalf("c, never the lowest member, made a plan: %v", planned)
		}
	}
	leases, err := r.store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		if l.Holder == "a" && parseRingPlan(l.Plan).ring != abc.Fingerprint() {
			t.Fatalf("a's Lease carries plan %q, want one for ring %s", l.Plan, abc.Fingerprint())
		}
	}
	r.leave("a")
	r.settle(5 * time.Second)
	bc := r.members["b"].Active()
	if bc.Plan != "by-b-for-b.c" || r.members["c"].Active().Plan != bc.Plan {
		t.Fatalf("after a left, b acts on %q and c on %q, want b's plan for {b, c}", bc.Plan, r.members["c"].Active().Plan)
	}
	if last := log.made()[len(log.made())-1]; last.prev != "by-a-for-a.b.c" {
		t.Fatalf("b planned {b, c} from %q, want a's plan", last.prev)
	}
}

// TestNoMoveWithoutItsPlan: while the lowest member cannot make the new ring's plan, nobody
// moves to it: a keeps every key, b handles none; once the plan is made the move proceeds.
func TestNoMoveWithoutItsPlan(t *testing.T) {
	t.Parallel()
	r, log := newPlannedRing(t)
	a := r.joinPlanned(log, "a")
	r.settle(5 * time.Second)
	log.setFail("a", true)
	b := r.joinPlanned(log, "b")
	for range 40 { // 5 s: ten retry periods
		r.step()
	}
	if got := r.count("a"); got != len(r.keys) {
		t.Fatalf("a handles %d of %d keys while the new ring has no plan, want every one", got, len(r.keys))
	}
	if got := r.count("b"); got != 0 || len(b.Target().Ring) != 0 {
		t.Fatalf("b handles %d keys and moves to %v before the ring has a plan", got, b.Target().Ring)
	}
	if got := a.Target().Ring; len(got) != 1 {
		t.Fatalf("a moves to %v without its plan", got)
	}
	if !a.Status().Pending || !b.Status().Pending {
		t.Fatal("a and b do not report a move pending while the ring they observe has no plan")
	}
	log.setFail("a", false)
	r.settle(5 * time.Second)
	if got := r.count("b"); got == 0 || got == len(r.keys) {
		t.Fatalf("b handles %d of %d keys after the plan was made", got, len(r.keys))
	}
}

// forgedPlans is a store whose List shows the plan of member a's Lease replaced by forged, as
// a stranger with write access to the Leases could write it between a's renewals.
type forgedPlans struct {
	LeaseStore
	forged string
}

func (f forgedPlans) List(ctx context.Context) ([]Lease, error) {
	leases, err := f.LeaseStore.List(ctx)
	for i := range leases {
		if leases[i].Holder == "a" {
			leases[i].Plan = f.forged
		}
	}
	return leases, err
}

// TestForeignPlansAreRefused: a plan the Placer refuses (here one written for another ring,
// under the fingerprint of the ring b observes) is not acted on: b keeps out of the ring and
// handles nothing, and a, which reads its own plan, keeps every key while b has not listed
// it (partitioned caches: Config.AwaitListed).
func TestForeignPlansAreRefused(t *testing.T) {
	t.Parallel()
	r, log := newPlannedRing(t)
	r.listed = true
	ab := NewRing("a", "b")
	r.wrap = func(id string, s LeaseStore) LeaseStore {
		if id == "b" {
			return forgedPlans{LeaseStore: s, forged: ringPlan{ring: ab.Fingerprint(), plan: "by-a-for-x.y"}.String()}
		}
		return s
	}
	r.joinPlanned(log, "a")
	r.settle(5 * time.Second)
	b := r.joinPlanned(log, "b")
	for range 40 {
		r.step()
	}
	if got := r.count("a"); got != len(r.keys) || len(b.Target().Ring) != 0 || r.count("b") != 0 {
		t.Fatalf("a handles %d of %d keys, b %d and moves to %v: a forged plan was acted on", got, len(r.keys), r.count("b"), b.Target().Ring)
	}
	if !b.Status().Pending {
		t.Error("b does not report the ring it cannot act on as pending")
	}
}

// TestTheLowestMemberPlansAgain: with Config.Replan the lowest member asks the planner again
// for the ring it planned; the same answer changes nothing (no ring change applied), another
// one moves every member to it, as a ring change does, no key handled twice meanwhile.
func TestTheLowestMemberPlansAgain(t *testing.T) {
	t.Parallel()
	r, log := newPlannedRing(t)
	r.listed, r.replan = true, 10*time.Second
	a, b := r.joinPlanned(log, "a"), r.joinPlanned(log, "b")
	listAll := func() {
		for _, m := range []*Member{a, b} {
			m.SetListed(m.Target().Fingerprint())
		}
	}
	for range 40 {
		r.step()
		listAll()
	}
	r.settle(5 * time.Second)
	first, gen := a.Active().Plan, a.Status().Generation
	for range 200 { // 25 s: two replan periods, the same answer
		r.step()
	}
	if a.Active().Plan != first || a.Status().Generation != gen {
		t.Fatalf("the same plan made again moved the ring: plan %q generation %d, was %q %d", a.Active().Plan, a.Status().Generation, first, gen)
	}
	log.mu.Lock()
	log.gen = 1
	log.mu.Unlock()
	for range 200 {
		r.step()
		listAll()
		if a.Active().Plan != first && b.Active().Plan == a.Active().Plan && r.allHandled() {
			if !strings.HasPrefix(a.Active().Plan, "g1-") {
				t.Fatalf("the members act on %q, want the new plan", a.Active().Plan)
			}
			return
		}
	}
	t.Fatalf("25 s after the planner's answer changed, a acts on %q and b on %q", a.Active().Plan, b.Active().Plan)
}
