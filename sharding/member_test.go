package sharding

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// The test durations: lease 3s, renew deadline 2s, retry 500ms; a step is a quarter retry.
const (
	tLease = 3 * time.Second
	tRenew = 2 * time.Second
	tRetry = 500 * time.Millisecond
	tDrain = 1500 * time.Millisecond
	tStep  = tRetry / 4
)

// testRing drives members over one fake store and clock, a tick each per step, and checks
// after every tick that no key is handled by two members.
type testRing struct {
	t       *testing.T
	clock   *fakeClock
	store   *fakeLeases
	members map[string]*Member
	paths   map[string]*cutLeases
	stopped map[string]bool // killed: no longer ticks, never releases
	keys    []string
	placer  Placer        // Config.Placer of the members that join
	planner Planner       // Config.Planner of the members that join
	listed  bool          // Config.AwaitListed of the members that join
	replan  time.Duration // Config.Replan of the members that join
	// wrap, when set, is the store the members that join read and write through.
	wrap func(id string, s LeaseStore) LeaseStore
}

func newTestRing(t *testing.T, keys int) *testRing {
	r := &testRing{t: t, clock: &fakeClock{now: time.Unix(1_000_000, 0)}, store: newFakeLeases(),
		members: map[string]*Member{}, paths: map[string]*cutLeases{}, stopped: map[string]bool{}}
	for i := range keys {
		r.keys = append(r.keys, fmt.Sprintf("ns-%d/object-%d", i%7, i))
	}
	return r
}

func (r *testRing) join(id string) *Member {
	path := &cutLeases{fakeLeases: r.store}
	var store LeaseStore = path
	if r.wrap != nil {
		store = r.wrap(id, path)
	}
	m := New(Config{Name: "jsinformer", Identity: id, LeaseDuration: tLease, RenewDeadline: tRenew,
		RetryPeriod: tRetry, DrainTimeout: tDrain, Placer: r.placer, Planner: r.planner, Replan: r.replan, AwaitListed: r.listed}, store, r.clock)
	r.members[id], r.paths[id] = m, path
	return m
}

func (r *testRing) leave(id string) {
	r.members[id].release()
	delete(r.members, id)
}

func (r *testRing) kill(id string) { r.stopped[id] = true }

// step moves the clock and ticks every running member, checking exclusivity after each tick.
func (r *testRing) step() {
	r.t.Helper()
	r.clock.step(tStep)
	for id, m := range r.members {
		if !r.stopped[id] {
			m.tick(r.t.Context())
		}
		r.exclusive()
	}
}

func (r *testRing) exclusive() {
	r.t.Helper()
	for _, k := range r.keys {
		var by []string
		for id, m := range r.members {
			if m.Handles(k) {
				by = append(by, id)
			}
		}
		if len(by) > 1 {
			r.t.Fatalf("at %v key %s is handled by %v", r.clock.Now(), k, by)
		}
	}
}

// settle steps until every key is handled by exactly one running member; it returns how long
// that took on the fake clock.
func (r *testRing) settle(within time.Duration) time.Duration {
	r.t.Helper()
	for start := r.clock.Now(); ; {
		if r.allHandled() {
			return r.clock.Now().Sub(start)
		}
		if r.clock.Now().Sub(start) > within {
			r.t.Fatalf("keys not all handled %v after the change", within)
		}
		r.step()
	}
}

// allHandled reports whether every running member acts on the ring of all running members
// and every key has exactly one handler.
func (r *testRing) allHandled() bool {
	running := 0
	for id := range r.members {
		if !r.stopped[id] {
			running++
		}
	}
	for id, m := range r.members {
		if st := m.Status(); !r.stopped[id] && (st.Pending || len(st.Members) != running) {
			return false
		}
	}
	for _, k := range r.keys {
		n := 0
		for id, m := range r.members {
			if !r.stopped[id] && m.Handles(k) {
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	return true
}

func (r *testRing) setCut(id string, cut bool) {
	r.paths[id].mu.Lock()
	r.paths[id].cut = cut
	r.paths[id].mu.Unlock()
}

func (r *testRing) count(id string) int {
	n := 0
	for _, k := range r.keys {
		if r.members[id].Handles(k) {
			n++
		}
	}
	return n
}

func TestHandOverNeverOverlaps(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 600)
	r.join("a")
	t.Logf("1 member: settled in %v", r.settle(5*time.Second))
	r.join("b")
	r.join("c")
	t.Logf("3 members: settled in %v", r.settle(5*time.Second))
	for _, id := range []string{"a", "b", "c"} {
		if n := r.count(id); n < 160 || n > 240 {
			t.Errorf("%s handles %d of 600 keys, want 200 ± 20%%", id, n)
		}
	}
	r.leave("c")
	if took := r.settle(5 * time.Second); took > 2*tRetry {
		t.Errorf("a released Lease was taken over in %v, want within two retry periods", took)
	}
	r.join("d")
	r.kill("a")
	took := r.settle(2 * tLease)
	t.Logf("a killed while d joins: settled in %v", took)
	if took < tRenew {
		t.Errorf("a's keys were taken %v after it stopped renewing, before its renew deadline", took)
	}
	if took > tLease+tRetry {
		t.Errorf("a's keys were taken %v after it stopped renewing, want within the lease duration plus a retry", took)
	}
}

func TestChurnNeverOverlaps(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 300)
	r.join("m0")
	r.settle(5 * time.Second)
	// Members come and go faster than a move completes.
	for i := 1; i <= 12; i++ {
		r.join(fmt.Sprintf("m%d", i))
		r.step()
		if i%3 == 0 {
			r.leave(fmt.Sprintf("m%d", i-1))
		}
		r.step()
	}
	r.settle(10 * time.Second)
}

func TestCallInFlightHoldsItsKey(t *testing.T) {
	t.Parallel()
	for _, finish := range []bool{true, false} {
		t.Run(fmt.Sprintf("finished=%v", finish), func(t *testing.T) {
			t.Parallel()
			r := newTestRing(t, 200)
			a := r.join("a")
			r.settle(5 * time.Second)
			b := r.join("b")
			// Find a key that moves to b, and hold a call on it in a.
			var moving string
			for _, k := range r.keys {
				if (Ring{"a", "b"}).Owner(k) == "b" {
					moving = k
					break
				}
			}
			end, ok := a.Begin(moving)
			if !ok {
				t.Fatalf("a does not handle %s before b joins", moving)
			}
			for range 2 * int(tRetry/tStep) { // two retry periods, less than the drain timeout
				r.step()
				if b.Handles(moving) {
					t.Fatalf("b handles %s while a's call on it runs", moving)
				}
			}
			if _, ok := a.Begin(moving); ok {
				t.Errorf("a started a new call on %s after b joined", moving)
			}
			start := r.clock.Now()
			if finish {
				end()
			}
			r.settle(2 * tDrain)
			took := r.clock.Now().Sub(start)
			if finish && took > tRetry {
				t.Errorf("b took %s %v after a's call ended, want within a retry period", moving, took)
			}
			if !b.Handles(moving) {
				t.Errorf("b does not handle %s", moving)
			}
		})
	}
}

func TestCutMemberStopsBeforeTheOthersTakeOver(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 300)
	a := r.join("a")
	b := r.join("b")
	r.settle(5 * time.Second)
	r.paths["a"].mu.Lock()
	r.paths["a"].cut = true
	r.paths["a"].mu.Unlock()
	cut := r.clock.Now()
	for !r.allHandledBy(b) {
		r.step() // a still ticks: its renewals fail; exclusive() checks every step
		if r.clock.Now().Sub(cut) > 2*tLease {
			t.Fatal("b never took a's keys")
		}
	}
	if st := a.Status(); !errors.Is(st.LastErr, errCut) {
		t.Errorf("a's last error is %v, want the renewal's", st.LastErr)
	}
	if a.Valid() {
		t.Error("a is still valid after its renew deadline")
	}
}

func (r *testRing) allHandledBy(m *Member) bool {
	for _, k := range r.keys {
		if !m.Handles(k) {
			return false
		}
	}
	return true
}

func TestGainsNameTheMovedKeys(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 400)
	a := r.join("a")
	r.settle(5 * time.Second)
	first := a.TakeGains()
	if len(first) != 1 {
		t.Fatalf("a applied %d rings joining alone, want 1", len(first))
	}
	for _, k := range r.keys {
		if !first[0].Has(k) {
			t.Fatalf("joining alone, a did not gain %s", k)
		}
	}
	r.join("b")
	r.settle(5 * time.Second)
	r.leave("b")
	r.settle(5 * time.Second)
	gains := a.TakeGains()
	if len(gains) == 0 {
		t.Fatal("a reported no gain after b left")
	}
	back := gains[len(gains)-1]
	for _, k := range r.keys {
		if want := (Ring{"a", "b"}).Owner(k) == "b"; back.Has(k) != want {
			t.Errorf("after b left, a gained %s: %v, want %v", k, back.Has(k), want)
		}
	}
}

func TestRingSpreadAndMoves(t *testing.T) {
	t.Parallel()
	keys := make([]string, 3000)
	for i := range keys {
		keys[i] = fmt.Sprintf("default/cm-%d", i)
	}
	three, four := NewRing("r-a", "r-b", "r-c"), NewRing("r-a", "r-b", "r-c", "r-d")
	counts := map[string]int{}
	moved := 0
	for _, k := range keys {
		counts[three.Owner(k)]++
		if o := four.Owner(k); o != three.Owner(k) {
			moved++
			if o != "r-d" {
				t.Fatalf("%s moved from %s to %s, not to the new member", k, three.Owner(k), o)
			}
		}
	}
	for id, n := range counts {
		if n < 800 || n > 1200 {
			t.Errorf("%s owns %d of 3000, want 1000 ± 20%%", id, n)
		}
	}
	if moved < 600 || moved > 900 {
		t.Errorf("adding a fourth member moved %d of 3000 keys, want about 750", moved)
	}
}

// A member that missed its renew deadline handles nothing even once a late renewal succeeds,
// until it has joined the ring again as a new member: then it gains every key it owns, so that
// the engine replays the calls it refused meanwhile. Cut for less than the lease duration, the
// others never took its keys; cut for longer, they did and give them back. exclusive()
// checks after every step that no key has two handlers.
func TestLateRenewalRejoins(t *testing.T) {
	t.Parallel()
	for _, cut := range []time.Duration{tRenew + tStep, 2 * tLease} {
		t.Run(fmt.Sprintf("cut %v", cut), func(t *testing.T) {
			t.Parallel()
			r := newTestRing(t, 200)
			a := r.join("a")
			r.join("b")
			r.settle(5 * time.Second)
			a.TakeGains()
			r.setCut("a", true)
			for start := r.clock.Now(); r.clock.Now().Sub(start) <= cut; {
				r.step()
			}
			if a.Valid() || r.count("a") != 0 {
				t.Fatalf("a handles %d keys (valid %v) %v after it was cut", r.count("a"), a.Valid(), cut)
			}
			r.setCut("a", false)
			r.step()
			gains := a.TakeGains()
			if r.count("a") != 0 && len(gains) == 0 {
				t.Fatal("a handles keys again without a gain")
			}
			r.settle(5 * time.Second)
			var gained int
			for _, g := range append(gains, a.TakeGains()...) {
				for _, k := range r.keys {
					if g.Has(k) && a.Handles(k) {
						gained++
					}
				}
			}
			if n := r.count("a"); n == 0 || gained != n {
				t.Errorf("a handles %d keys after rejoining and gained %d of them, want all", n, gained)
			}
		})
	}
}

// A ring that changes and changes back before the move completes ends with every key handled:
// the keys dropped for the short-lived ring are taken again.
func TestRingFlapBackRestoresKeys(t *testing.T) {
	t.Parallel()
	for steps := 1; steps <= 6; steps++ {
		t.Run(fmt.Sprintf("gone after %d steps", steps), func(t *testing.T) {
			t.Parallel()
			r := newTestRing(t, 300)
			r.join("a")
			r.join("b")
			r.settle(5 * time.Second)
			r.join("d")
			for range steps {
				r.step()
			}
			r.leave("d")
			r.settle(5 * time.Second)
		})
	}
}

// Run looks again just after another member's Lease would expire, not a retry period later.
func TestNextTickFollowsTheNextExpiry(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 10)
	a := r.join("a")
	r.join("b")
	r.settle(5 * time.Second)
	if got := a.nextTick(false); got != tRetry {
		t.Errorf("with b renewing, next tick in %v, want the retry period %v", got, tRetry)
	}
	r.kill("b")
	killed := r.clock.Now()
	for r.clock.Now().Sub(killed) < tLease-200*time.Millisecond-tStep {
		r.step()
	}
	// b's Lease expires 200ms from now, plus up to a step (a saw its last renewal a step late).
	if got := a.nextTick(false); got < 200*time.Millisecond || got > 210*time.Millisecond+tStep+tStep {
		t.Errorf("b's Lease expires in 200-325ms, next tick in %v, want just after that", got)
	}
}
