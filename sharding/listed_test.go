package sharding

import (
	"testing"
	"time"
)

// With AwaitListed a member keeps handling the keys it is to lose until their new owner has
// recorded its caches listed for the new ring: b joins, and until b calls SetListed, a
// handles every key (the others' caches could miss an event otherwise) and b none; once b
// has listed, the keys move as without it, never handled twice (step checks every tick).
func TestNarrowingWaitsForTheGainersList(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 400)
	r.listed = true
	a := r.join("a")
	a.SetListed(Ring{"a"}.Fingerprint())
	r.settle(5 * time.Second)
	b := r.join("b")
	for range 40 { // 5 s: ten retry periods
		r.step()
	}
	if got := r.count("a"); got != len(r.keys) {
		t.Fatalf("a handles %d of %d keys before b listed its caches, want every one", got, len(r.keys))
	}
	if got := r.count("b"); got != 0 {
		t.Fatalf("b handles %d keys before it listed its caches", got)
	}
	if st := a.Status(); !st.Pending || len(st.Members) != 1 {
		t.Fatalf("a's status %+v: want it acting on {a}, a move pending", st)
	}
	ab := NewRing("a", "b")
	b.SetListed(ab.Fingerprint())
	a.SetListed(ab.Fingerprint())
	took := r.settle(5 * time.Second)
	if got := r.count("b"); got == 0 || got == len(r.keys) {
		t.Fatalf("b handles %d of %d keys after the move", got, len(r.keys))
	}
	t.Logf("the move ended %v after b listed", took)
}

// A member that joins alone, or whose ring only lost a member, waits for nobody's list but
// its own gains' (there is no other member to hold its keys): a ring whose other members are
// gone moves at once.
func TestNarrowingWaitsForNobodyWhenAlone(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 100)
	r.listed = true
	r.join("a")
	r.settle(5 * time.Second)
	r.join("b")
	r.members["b"].SetListed(NewRing("a", "b").Fingerprint())
	r.members["a"].SetListed(NewRing("a", "b").Fingerprint())
	r.settle(5 * time.Second)
	r.kill("b")
	r.settle(10 * time.Second) // b's Lease expires; a, alone, gains b's keys
	if got := r.count("a"); got != len(r.keys) {
		t.Fatalf("a handles %d of %d keys after b died", got, len(r.keys))
	}
}
