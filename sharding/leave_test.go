package sharding

import (
	"context"
	"testing"
	"time"
)

// TestLeaveHandsOverAfterTheOthersListed: a member that leaves keeps handling its keys until
// the others have listed the ring without it (Config.AwaitListed), then hands everything over
// and Leave returns; no key is ever handled twice (step checks) nor, once the others listed,
// by nobody.
func TestLeaveHandsOverAfterTheOthersListed(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 400)
	r.listed = true
	a, b := r.join("a"), r.join("b")
	ab := NewRing("a", "b")
	a.SetListed(ab.Fingerprint())
	b.SetListed(ab.Fingerprint())
	r.settle(5 * time.Second)
	mine := r.count("b")
	if mine == 0 {
		t.Fatal("b owns no key: the test shows nothing")
	}

	left := make(chan bool, 1)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	go func() { left <- b.Leave(ctx) }() // joined below: Leave returns once the member has left
	// 5 s: ten retry periods, and a has not listed the ring without b.
	for range 40 {
		r.step()
	}
	if got := r.count("b"); got != mine {
		t.Fatalf("b handles %d of its %d keys before a listed the ring without it", got, mine)
	}
	if got := a.Target().Ring; !got.Equal(Ring{"a"}) {
		t.Fatalf("a moves to %v, want the ring without the leaving b", got)
	}
	select {
	case <-left:
		t.Fatal("Leave returned before the others listed")
	default:
	}
	a.SetListed(Ring{"a"}.Fingerprint())
	for range 80 {
		r.step()
		select {
		case ok := <-left:
			if !ok {
				t.Fatal("Leave gave up")
			}
			if got := r.count("b"); got != 0 {
				t.Fatalf("b still handles %d keys once it left", got)
			}
			r.leave("b")
			r.settle(5 * time.Second) // a handles every key
			return
		default:
		}
	}
	t.Fatal("Leave did not return 10 s after a listed")
}

// TestLeaveAloneReturnsAtOnce: a member alone in its ring has nobody to hand over to.
func TestLeaveAloneReturnsAtOnce(t *testing.T) {
	t.Parallel()
	r := newTestRing(t, 10)
	a := r.join("a")
	r.settle(5 * time.Second)
	if !a.Leave(t.Context()) {
		t.Fatal("Leave of the only member did not return done")
	}
}

// TestEveryMemberLeaving: when every member leaves at once nobody is left to hand over to;
// each Leave returns once it handles nothing, and no key is handled twice meanwhile.
func TestEveryMemberLeaving(t *testing.T) {
	t.Parallel()
	r, log := newPlannedRing(t)
	r.listed = true
	a, b := r.joinPlanned(log, "a"), r.joinPlanned(log, "b")
	for range 40 {
		r.step()
		a.SetListed(a.Target().Fingerprint())
		b.SetListed(b.Target().Fingerprint())
	}
	r.settle(5 * time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	left := make(chan bool, 2)
	for _, m := range []*Member{a, b} {
		go func() { left <- m.Leave(ctx) }() // joined below
	}
	for n := 0; n < 2; {
		r.step()
		select {
		case ok := <-left:
			if !ok {
				t.Fatal("Leave gave up")
			}
			n++
		default:
		}
		if r.clock.Now().Sub(time.Unix(1_000_000, 0)) > 5*time.Minute {
			t.Fatal("the members did not leave")
		}
	}
	if r.count("a")+r.count("b") != 0 {
		t.Fatalf("after leaving a handles %d keys and b %d", r.count("a"), r.count("b"))
	}
}
