package sharding

import (
	"testing"
	"time"
)

// A renewal stored whose reply was lost, or someone annotating the Lease, changes its
// resource version behind the member's back: the member renews on the one it lists and keeps
// its keys past the renew deadline, and an annotation stays.
func TestRenewalSurvivesAChangedLease(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(r *testRing, a *Member)
	}{
		{"reply lost", func(r *testRing, _ *Member) {
			r.paths["a"].mu.Lock()
			r.paths["a"].loseReply = 1
			r.paths["a"].mu.Unlock()
		}},
		{"reply lost, stored after the next List", func(r *testRing, _ *Member) {
			r.paths["a"].mu.Lock()
			r.paths["a"].late = true
			r.paths["a"].mu.Unlock()
		}},
		{"annotated", func(r *testRing, a *Member) { r.store.annotate(a.lease, "team", "web") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRing(t, 100)
			a := r.join("a")
			r.join("b")
			r.settle(5 * time.Second)
			c.change(r, a)
			for changed := r.clock.Now(); r.clock.Now().Sub(changed) <= tLease; {
				r.step()
				if !a.Valid() {
					t.Fatalf("a lost its Lease %v after the change: %v", r.clock.Now().Sub(changed), a.Status().LastErr)
				}
			}
			if !r.allHandled() {
				t.Error("not every key is handled after the change")
			}
			if got := r.store.get(a.lease); c.name == "annotated" && got.others["team"] != "web" {
				t.Errorf("the annotation was dropped by a renewal: %v", got.others)
			}
		})
	}
}

// A Lease of this member's name renewed by another process (the same identity twice) is not
// renewed over: the member stops handling at its renew deadline.
func TestRenewalLeavesAnotherProcessLease(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 100)
	a := r.join("a")
	r.settle(5 * time.Second)
	l := r.store.get(a.lease)
	l.Renewed = l.Renewed.Add(time.Second)
	if _, err := r.store.Update(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	for changed := r.clock.Now(); r.clock.Now().Sub(changed) <= tRenew; {
		r.step()
	}
	if a.Valid() {
		t.Error("a renewed over a Lease another process renewed")
	}
}
